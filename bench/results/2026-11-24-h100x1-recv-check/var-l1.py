p='src/ucp_ext/mgi/mgi_device.cuh'
s=open(p).read()
old="""            v[u] = (j < n) ? __ldcg((const unsigned long long*)"""
assert old in s
s=s.replace(old,"""            v[u] = (j < n) ? __ldca((const unsigned long long*)""")
open(p,'w').write(s)
