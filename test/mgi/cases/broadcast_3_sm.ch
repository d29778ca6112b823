np=3; args='broadcast -t 50000'
