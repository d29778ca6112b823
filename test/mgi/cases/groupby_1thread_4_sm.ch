np=4; args='shuffle -s -t 100000'
