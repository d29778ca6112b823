np=4; topo=ring4.topo; args='zipf -z 1.5 -t 100000 -V cpu%d'
