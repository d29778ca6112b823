np=3; topo=chain3.topo; args='shuffle -t 100000 -V cpu%d --expect-path 0,1,2'
