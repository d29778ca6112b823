np=3; args='broadcast -r 16 -t 50000'
