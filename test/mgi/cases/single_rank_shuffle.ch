np=1; args='shuffle -e 3 -t 100000'
