np=3; export MGI_TEST_SORT_MIRROR=1; args='two_channels -e 2 -t 50000'
