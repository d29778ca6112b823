/*
 * Independent reference max-flow for the GIG tests: Dinic's algorithm
 * (level graph + blocking flow) on doubles, written apart from the
 * library's Edmonds-Karp so that a shared bug cannot hide.
 */
#ifndef GIG_REF_MAXFLOW_H_
#define GIG_REF_MAXFLOW_H_

#include <gig.h>

#include <algorithm>
#include <limits>
#include <queue>
#include <vector>

class ref_dinic {
public:
    explicit ref_dinic(int n) : m_adj(n), m_level(n), m_it(n) {}

    void add(int u, int v, double c) {
        m_adj[u].push_back({v, (int)m_adj[v].size(), c});
        m_adj[v].push_back({u, (int)m_adj[u].size() - 1, 0});
    }

    double run(int s, int t) {
        double flow = 0;

        while (bfs(s, t)) {
            std::fill(m_it.begin(), m_it.end(), 0);
            for (double f; (f = dfs(s, t, inf())) > eps;) {
                flow += f;
            }
        }
        return flow;
    }

    static double inf() { return 1e18; }

private:
    struct arc { int to, rev; double cap; };
    static constexpr double eps = 1e-9;

    bool bfs(int s, int t) {
        std::fill(m_level.begin(), m_level.end(), -1);
        std::queue<int> q;
        m_level[s] = 0;
        q.push(s);
        while (!q.empty()) {
            int u = q.front();
            q.pop();
            for (const arc &a : m_adj[u]) {
                if ((a.cap > eps) && (m_level[a.to] < 0)) {
                    m_level[a.to] = m_level[u] + 1;
                    q.push(a.to);
                }
            }
        }
        return m_level[t] >= 0;
    }

    double dfs(int u, int t, double f) {
        if (u == t) {
            return f;
        }
        for (int &i = m_it[u]; i < (int)m_adj[u].size(); ++i) {
            arc &a = m_adj[u][i];
            if ((a.cap > eps) && (m_level[a.to] == m_level[u] + 1)) {
                double d = dfs(a.to, t, std::min(f, a.cap));
                if (d > eps) {
                    a.cap -= d;
                    m_adj[a.to][a.rev].cap += d;
                    return d;
                }
            }
        }
        return 0;
    }

    std::vector<std::vector<arc>> m_adj;
    std::vector<int>              m_level, m_it;
};

/* Max-flow between vertex sets of g; vertices with skip[v] are left out
 * (e.g. the network vertex for a same-server reference); edges kept only
 * if keep_edge is empty or keep_edge[e].  A NIC bridges its server and the
 * network only (never two PCIe devices): each NIC is split into an "up"
 * half (server -> NIC -> network) and a "down" half (network -> NIC ->
 * server), unless raw is set (the plain graph, as the baseline sees it). */
static inline double
ref_maxflow(const gig_graph_t *g, const std::vector<int> &srcs,
            const std::vector<int> &dsts, const std::vector<bool> &skip = {},
            const std::vector<bool> &keep_edge = {}, bool raw = false)
{
    std::vector<int> down(g->nv, -1);
    int n = g->nv + 2;

    for (int v = 0; v < g->nv; ++v) {
        if (!raw && (g->v[v].type == GIG_VTX_NIC)) {
            down[v] = n++;
        }
    }
    ref_dinic d(n);
    int ss = g->nv, tt = g->nv + 1;

    for (int e = 0; e < g->ne; ++e) {
        int u = g->e[e].src, v = g->e[e].dst;
        if (!skip.empty() && (skip[u] || skip[v])) {
            continue;
        }
        if (!keep_edge.empty() && !keep_edge[e]) {
            continue;
        }
        int a = u, b = v;
        if ((down[u] >= 0) && (v != g->net)) {
            a = down[u];
        }
        if ((down[v] >= 0) && (u == g->net)) {
            b = down[v];
        }
        d.add(a, b, g->e[e].capacity);
    }
    for (int s : srcs) {
        d.add(ss, s, ref_dinic::inf());
    }
    for (int t : dsts) {
        d.add(t, tt, ref_dinic::inf());
    }
    return d.run(ss, tt);
}

#endif
