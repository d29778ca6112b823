np=6; topo=split4.topo; args='shuffle -t 100000 -V src,src,src,ra,rb,dst --ordered --expect-spread 5'
