np=3; export MGI_TEST_GPU_DEFAULTS=1; args='zipf -z 1.5 -t 100000'
