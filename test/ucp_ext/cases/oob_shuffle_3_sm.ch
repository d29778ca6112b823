oob=3; args='shuffle -t 20000'
