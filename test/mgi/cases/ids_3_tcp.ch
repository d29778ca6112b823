np=3; tls=tcp,self; export MGI_TEST_MAX_CHANNELS=3; args=ids
