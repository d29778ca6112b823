np=4; args='many2one -t 20000'
