np=3; export MGI_PEER_DIRECT=1; args='shuffle -e 2 -t 50000'
