np=3; args='broadcast -t 10000'
