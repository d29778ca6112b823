p='src/ucp_ext/mgi/mgi_device.cuh'
s=open(p).read()
old="""            uint32_t i, e, lt, tsz, k, t;

            for (i = threadIdx.x; i < rs->tup[rs->nr]; i += blockDim.x) {
                e   = (rs->nr == 1) ? 0 :
                      mgi_dev_runs_find(rs->tup, rs->nr, i);
                tsz = (h->tuple_size != 0) ? h->tuple_size : rs->len[e];
                k   = rs->len[e] / tsz;
                lt  = i - rs->tup[e];
                t   = lt / k;
                f(rs->msgs[e] + (size_t)t * rs->msz[e] + MGI_MSG_HDR_SIZE +
                  (size_t)(lt - t * k) * tsz, tsz);
            }"""
assert old in s
new="""            uint32_t i, e, lt, tsz, k, t, nsz = 0;
            const char *nxt = NULL, *cur;
            auto at = [&](uint32_t x, uint32_t *sz) -> const char* {
                e   = (rs->nr == 1) ? 0 :
                      mgi_dev_runs_find(rs->tup, rs->nr, x);
                tsz = (h->tuple_size != 0) ? h->tuple_size : rs->len[e];
                k   = rs->len[e] / tsz;
                lt  = x - rs->tup[e];
                t   = lt / k;
                *sz = tsz;
                return rs->msgs[e] + (size_t)t * rs->msz[e] +
                       MGI_MSG_HDR_SIZE + (size_t)(lt - t * k) * tsz;
            };

            i = threadIdx.x;
            if (i < rs->tup[rs->nr]) {
                nxt = at(i, &nsz);
            }
            for (; i < rs->tup[rs->nr]; i += blockDim.x) {
                const uint32_t csz = nsz;
                cur = nxt;
                if (i + blockDim.x < rs->tup[rs->nr]) {
                    nxt = at(i + blockDim.x, &nsz);
                    asm volatile("prefetch.global.L1 [%0];" :: "l"(nxt));
                    asm volatile("prefetch.global.L1 [%0];" :: "l"(nxt + nsz - 1));
                }
                f(cur, csz);
            }"""
s=s.replace(old,new)
open(p,'w').write(s)
