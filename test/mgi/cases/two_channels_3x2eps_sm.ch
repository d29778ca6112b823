np=3; args='two_channels -e 2 -t 50000'
