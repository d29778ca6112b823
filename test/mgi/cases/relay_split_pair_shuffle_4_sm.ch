np=4; topo=split4.topo; args='shuffle -t 100000 -V src,ra,rb,dst --expect-split'
