np=2; export MGI_TEST_MAX_CHANNELS=4; args=ids
