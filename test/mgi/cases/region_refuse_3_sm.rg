np=3; args=refuse
