#!/usr/bin/env bash
# run205: after the last review's mend (the suite's workloads ring set
# from the wide one, the id agreement's array): the GPU suite
SUITE_S=380 bash abbase/r80b.sh suite '.'
