np=4; args='many2one -t 100000'
