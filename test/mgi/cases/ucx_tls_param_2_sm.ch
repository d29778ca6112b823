np=2; tls=nonexistent_tl; export MGI_UCX_TLS=sm,self; args='shuffle -t 20000'
