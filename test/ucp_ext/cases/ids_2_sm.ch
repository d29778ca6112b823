np=2; export MGI_MAX_CHANNELS=4; args=ids
