np=3; args=peer_dies; timeout=90
