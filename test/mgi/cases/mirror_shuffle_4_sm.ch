np=4; export MGI_TEST_SORT_MIRROR=1; args='shuffle -t 500000'
