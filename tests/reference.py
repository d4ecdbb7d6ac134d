"""A deliberately plain, loop-based re-reading of docs/concepts.md.

Written apart from ``golden/`` and sharing none of its code, so that the two can
only agree by both being right. Slow on purpose: use it on small tensors.
"""

# Reuse direction of each group, as the grid coordinate that changes along it.
DIRECTION = {"t": "x", "y": "t", "x": "y"}


def group_of(c, partition):
    dt, dy, _ = partition
    if c < dt:
        return "t"
    if c < dt + dy:
        return "y"
    return "x"


def token(t, y, x, grid):
    T, H, W = grid
    return (t * H + y) * W + x


def coords(n, grid):
    T, H, W = grid
    return n // (H * W), (n // W) % H, n % W


def reference_token(n, c, grid, partition):
    """Index of the token whose value n reuses on channel c, or None for an anchor."""
    t, y, x = coords(n, grid)
    axis = DIRECTION[group_of(c, partition)]
    pos = {"t": t, "y": y, "x": x}[axis]
    if pos % 2 == 0:
        return None
    ref = {"t": t, "y": y, "x": x}
    ref[axis] = pos - 1
    return token(ref["t"], ref["y"], ref["x"], grid)


def hi_nibble(v):
    return v >> 4


def lo_nibble(v):
    return v & 15


def state_of(a, b, F, P):
    d = (a ^ b) & 0xFF
    # The top `bits` bits of two bytes agree, written as a loop over bit positions.
    def agree(bits):
        return all(((d >> (7 - i)) & 1) == 0 for i in range(bits))
    if agree(F):
        return 2
    if agree(P):
        return 1
    return 0


def reuse(x, grid, partition, F, P):
    """(states, approximated) of a list-of-lists operand x[N][D]."""
    N, D = len(x), len(x[0])
    states = [[0] * D for _ in range(N)]
    approx = [list(row) for row in x]
    for n in range(N):
        for c in range(D):
            r = reference_token(n, c, grid, partition)
            if r is None:
                continue
            a, b = x[r][c], x[n][c]
            s = state_of(a, b, F, P)
            states[n][c] = s
            if s == 2:
                approx[n][c] = a
            elif s == 1:
                approx[n][c] = 16 * hi_nibble(a) + lo_nibble(b)
    return states, approx


def matmul_t(a, b):
    return [[sum(p * q for p, q in zip(ra, rb)) for rb in b] for ra in a]


def oracle(q_states, k_states):
    cost = {2: 0.0, 1: 0.5, 0: 1.0}
    total = 0.0
    N, D = len(q_states), len(q_states[0])
    for i in range(N):
        for j in range(len(k_states)):
            for c in range(D):
                sq, sk = q_states[i][c], k_states[j][c]
                # The table of docs/concepts.md, "Operation counts and the oracle bound", case by case.
                q_anchor = sq == 0
                k_anchor = sk == 0
                if q_anchor and k_anchor:
                    total += 1
                elif q_anchor:
                    total += cost[sk]
                elif k_anchor:
                    total += cost[sq]
                elif 2 in (sq, sk):
                    total += 0
                elif 1 in (sq, sk):
                    total += 0.5
                else:
                    total += 1
    return total


def window(x, grid, partition, F, P, w):
    """Linear-layer window reuse of x[N][C], C a multiple of D."""
    N, C = len(x), len(x[0])
    D = sum(partition)
    out = [list(r) for r in x]
    states = [[0] * C for _ in range(N)]
    T, H, W = grid
    extent = {"t": T, "y": H, "x": W}
    for n in range(N):
        t, y, xx = coords(n, grid)
        for c in range(C):
            axis = DIRECTION[group_of(c % D, partition)]
            pos = {"t": t, "y": y, "x": xx}[axis]
            start = pos - pos % w
            if start + w > extent[axis] or pos == start:
                continue
            members = []
            for p in range(start, start + w):
                cc = {"t": t, "y": y, "x": xx}
                cc[axis] = p
                members.append(x[token(cc["t"], cc["y"], cc["x"], grid)][c])
            ref = members[0]
            # std < theta  <=>  w^2 * var < w^2 * theta^2, all in integers.
            var_w2 = w * sum(m * m for m in members) - sum(members) ** 2
            if var_w2 < (w * 2 ** (8 - F)) ** 2:
                states[n][c], out[n][c] = 2, ref
            elif var_w2 < (w * 2 ** (8 - P)) ** 2:
                states[n][c], out[n][c] = 1, 16 * hi_nibble(ref) + lo_nibble(x[n][c])
    return states, out


def pv_oracle(n_q, v_states):
    """P V~'s oracle count, docs/concepts.md, "Operation counts and the oracle bound":
    per query and channel, each key token
    costs 1 as an anchor and cost(state) as a partner."""
    cost = {2: 0.0, 1: 0.5, 0: 1.0}
    return n_q * sum(cost[s] for row in v_states for s in row)
