np=5; topo=fan5.topo; args='shuffle -t 100000 -V src,r1,ra,rb,dst --expect-split'
