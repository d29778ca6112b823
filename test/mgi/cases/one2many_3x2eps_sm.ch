np=3; args='one2many -e 2 -t 200000'
