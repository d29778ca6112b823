np=2; args='shuffle -e 2 -t 100000'
