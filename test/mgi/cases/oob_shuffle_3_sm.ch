oob=3; args='shuffle -t 100000'
