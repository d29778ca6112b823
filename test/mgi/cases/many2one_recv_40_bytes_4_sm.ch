np=4; args='many2one -r 40 -t 100000'
