np=3; topo=chain3.topo; export MGI_SEG_SIZE=512 MGI_STAGE_DEPTH=2 MGI_SORT_DEPTH=2 MGI_RECV_DEPTH=2 MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3; args='shuffle -s -t 50000 -V cpu%d --expect-path 2,1,0'
