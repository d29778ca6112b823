np=3; export MGI_DIRECT_RINGS=1 MGI_TEST_DIRECT_RING_KB=4; args='shuffle -e 2 -t 50000'
