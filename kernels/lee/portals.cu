// The Lee module's portals part: compiled after kernels/lee/wave.cu (whose header says how the
// module is put together), with its definitions in scope.
// ---------------------------------------------------------------------------------------------
// Portals (where the adaptive default goes once rounds run narrow, and the portals-only
// schedule throughout). On a maze the queue's tile runs step through every level of the wave
// inside each tile, one dependent step per level, and the wave needs dozens of levels to cross
// a tile. Here a tile is crossed in one step. A portal is a cell with an allowed move out of
// its tile; for every tile the distances inside it between its portals are found once per map
// (lee_portal_dist: a BFS from each portal, all tiles at once). The wave then runs over the
// portals alone, on the work queue above: a tile run takes the portals whose labels fell since
// the tile last applied them, lowers the tile's other portals through its table, and lowers
// the cells those portals move to in other tiles (atomicMin; such a cell is a portal too, as
// moves are symmetric), queueing their tiles. When nothing is queued every portal holds its
// distance: a shortest path is a chain of stretches inside tiles between portals and moves
// between tiles, and each link was applied by a run that started after its first end's label
// was final. lee_portal_fill then fills every tile from its border labels (bw_tile<true>).
//
// Per map: pcount[t] tile t's portals and poff[t] their number in the tiles before it
// (poff[ntiles] = all portals); slot s = t * PT_MAX + j holds tile t's portal j, in row-major
// order: pinfo[s] = its cell in the tile (row * 64 + column) | its moves out of the tile << 16;
// doff[t] where tile t's k x k table starts in dist (PT_FAR: not connected inside the tile).
// Per query: mark[s] = the label portal s had when a run last applied it. Fixed slots let a run
// load a tile's portals in the same round trip as their count.
// ---------------------------------------------------------------------------------------------

#define PT_CHUNKS (PT_MAX / 32)
#define PT_FAR 0xffffu
#define PT_ROWS 4 /* table rows a run loads at once */
// Shared words per warp of lee_portal_queue: its tile's portals' labels and slots, and the
// list of those that fell.
#define PT_WARP_WORDS (3 * PT_MAX)
#if PT_WARP_SMEM != 4 * PT_WARP_WORDS
#error "PT_WARP_SMEM is 3 x PT_MAX words"
#endif

// The cells of this lane's row (planes P, row `lane` of its tile) with a move out of the tile.
__device__ __forceinline__ u64 pt_row(const u64 (&P)[8], u32 lane, u32 ndirs) {
    constexpr u64 FIRST = 1ull, LAST = 1ull << 63;
    u64 m = (P[0] & FIRST) | (P[2] & LAST);
    if (lane == 0) m |= P[1];
    if (lane == 31) m |= P[3];
    if (ndirs == 8) {
        m |= ((P[4] | P[7]) & FIRST) | ((P[5] | P[6]) & LAST);
        if (lane == 0) m |= P[4] | P[5];
        if (lane == 31) m |= P[6] | P[7];
    }
    return m;
}

__device__ __forceinline__ u32 warp_exclusive_sum(u32 v) {
    const u32 lane = threadIdx.x & 31;
    u32 s = v;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        const u32 n = __shfl_up_sync(FULL_MASK, s, o);
        if (lane >= o) s += n;
    }
    return s - v;
}

// Warps stride over the tiles (the loop is warp-uniform).
#define PT_FOR_EACH_TILE(t, ntiles)                                                                \
    for (u32 t = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5); t < (ntiles);         \
         t += (u32)(((u64)gridDim.x * blockDim.x) >> 5))

extern "C" __global__ void lee_portal_count(const u64 *__restrict__ planes, u32 h, u32 wwords,
                                            u32 ndirs, u32 tiles_x, u32 tiles_y, u32 *pcount) {
    const u32 lane = threadIdx.x & 31;
    PT_FOR_EACH_TILE(t, tiles_x * tiles_y) {
        u64 P[8];
        bw_planes(planes, h, wwords, ndirs, t % tiles_x, (t / tiles_x) * 32 + lane, P);
        const u32 c = __reduce_add_sync(FULL_MASK, (u32)__popcll(pt_row(P, lane, ndirs)));
        if (lane == 0) pcount[t] = c;
    }
}

extern "C" __global__ void lee_portal_list(const u64 *__restrict__ planes, u32 h, u32 wwords,
                                           u32 ndirs, u32 tiles_x, u32 tiles_y,
                                           u32 *pinfo) {
    const u32 lane = threadIdx.x & 31;
    PT_FOR_EACH_TILE(t, tiles_x * tiles_y) {
        u64 P[8];
        bw_planes(planes, h, wwords, ndirs, t % tiles_x, (t / tiles_x) * 32 + lane, P);
        u64 m = pt_row(P, lane, ndirs);
        u64 at = (u64)t * PT_MAX + warp_exclusive_sum((u32)__popcll(m));
        while (m) {
            const u32 j = __ffsll((long long)m) - 1;
            m &= m - 1;
            u32 out = 0;
            for (u32 k = 0; k < ndirs; ++k) {
                const int cx = (int)j + DX[k], cy = (int)lane + DY[k];
                if (((P[k] >> j) & 1ull) && (cx < 0 || cx >= 64 || cy < 0 || cy >= 32))
                    out |= 1u << k;
            }
            pinfo[at++] = (lane * 64 + j) | (out << 16);
        }
    }
}

// One warp per portal: a BFS inside its tile from it, on the tile's bit planes; row i of the
// tile's table holds the level at which each portal was reached.
extern "C" __global__ void __launch_bounds__(PT_DIST_THREADS)
lee_portal_dist(const u64 *__restrict__ planes, u32 h, u32 wwords, u32 ndirs, u32 tiles_x,
                u32 tiles_y, const u32 *__restrict__ poff, const u32 *__restrict__ pinfo,
                const u64 *__restrict__ doff, unsigned short *dist, u32 total) {
    __shared__ unsigned short found_all[PT_DIST_THREADS / 32][PT_MAX];
    const u32 lane = threadIdx.x & 31, ntiles = tiles_x * tiles_y;
    unsigned short *found = found_all[threadIdx.x >> 5];
    PT_FOR_EACH_TILE(g, total) {
        // The tile of portal g: the last t with poff[t] <= g (tiles without portals share
        // their successor's start).
        u32 lo = 0, hi = ntiles;
        while (hi - lo > 1) {
            const u32 mid = (lo + hi) / 2;
            if (poff[mid] <= g) lo = mid; else hi = mid;
        }
        const u32 t = lo, base = poff[t], k = poff[t + 1] - base, i = g - base;
        u64 P[8];
        bw_planes(planes, h, wwords, ndirs, t % tiles_x, (t / tiles_x) * 32 + lane, P);
        const u64 m = pt_row(P, lane, ndirs);
        const u32 before = warp_exclusive_sum((u32)__popcll(m));
        for (u32 j = lane; j < k; j += 32) found[j] = PT_FAR;
        __syncwarp();
        const u32 src = pinfo[(u64)t * PT_MAX + i] & 0xffffu;
        u64 F = lane == src / 64 ? 1ull << (src % 64) : 0ull, V = F;
        if (F) found[i] = 0;
        for (u32 L = 1;; ++L) {
            const u64 c = bw_step(P, F, lane, ndirs) & ~V;
            V |= c;
            F = c;
            for (u64 hit = c & m; hit; hit &= hit - 1) {
                const u32 j = __ffsll((long long)hit) - 1;
                found[before + __popcll(m & ((1ull << j) - 1))] = (unsigned short)L;
            }
            if (!__any_sync(FULL_MASK, F != 0)) break;
        }
        __syncwarp();
        unsigned short *row = dist + doff[t] + (u64)i * k;
        for (u32 j = lane; j < k; j += 32) row[j] = found[j];
        __syncwarp();
    }
}

// Every tile queued (each applies its portals once: labels the rounds or the goal's tile
// already set), every mark cleared.
extern "C" __global__ void lee_portal_queue_all(u64 *ring, u32 *tile_state, u32 *ctl, u32 *mark,
                                                u32 ntiles) {
    GRID_STRIDE(i, (u64)ntiles * PT_MAX) {
        if (i < ntiles) {
            ring[i] = ((u64)(i + 1) << 32) | i;
            tile_state[i] = BWQ_QUEUED;
        }
        mark[i] = UNREACHED;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[BWQ_HEAD] = 0;
        ctl[BWQ_TAIL] = ntiles;
        ctl[BWQ_PENDING] = ntiles;
        ctl[BWQ_VISITS] = 0;
    }
}

// lee_portal_queue's arguments (src/lee/gpu/portals.rs's PortalArgs, #[repr(C)], the same
// fields in the same order).
struct PortalArgs {
    BitwaveQueueArgs q;
    const u32 *pcount, *pinfo;
    const u64 *doff;
    const unsigned short *dist;
    u32 *mark;
};

// Direction index (DX, DY order) of the neighbouring tile at offset (dx, dy).
__device__ __forceinline__ u32 pt_dir(int dx, int dy) {
    if (dy == 0) return dx < 0 ? 0u : 2u;
    if (dx == 0) return dy < 0 ? 1u : 3u;
    if (dy < 0) return dx < 0 ? 4u : 5u;
    return dx > 0 ? 6u : 7u;
}

// Through a tile's k x k table: each fallen portal's row (fallen[0..nfallen), their labels
// lab[i]) offers its label plus the distance inside to this lane's portals' best. Rows go ROWS
// at a time, every load of a batch issued before any is used (past the list, the batch's first
// row again: the min is unchanged by a repeat). Plain loads: through the read-only data path
// (__ldg) both runs were slower (H100, docs/bench-history fifteenth part: the queue's on random
// terrain 1000² 0.66 against 0.51 ms, the block's on the 1000² maze 3.81 against 3.75).
template <u32 ROWS>
__device__ __forceinline__ void pt_through_table(const unsigned short *table, u32 k,
                                                 const u32 *fallen, u32 nfallen, const u32 *lab,
                                                 u32 (&best)[PT_CHUNKS]) {
    const u32 lane = threadIdx.x & 31;
    for (u32 b = 0; b < nfallen; b += ROWS) {
        u32 li[ROWS], d[ROWS][PT_CHUNKS];
#pragma unroll
        for (u32 r = 0; r < ROWS; ++r) {
            const u32 i = fallen[b + r < nfallen ? b + r : b];
            li[r] = lab[i];
#pragma unroll
            for (u32 c = 0; c < PT_CHUNKS; ++c) {
                d[r][c] = PT_FAR;
                if (c * 32 >= k) break;
                if (c * 32 + lane < k) d[r][c] = table[(u64)i * k + c * 32 + lane];
            }
        }
#pragma unroll
        for (u32 r = 0; r < ROWS; ++r)
#pragma unroll
            for (u32 c = 0; c < PT_CHUNKS; ++c)
                if (d[r][c] != PT_FAR) best[c] = min(best[c], li[r] + d[r][c]);
    }
}

// What a run of a tile reads before the tile is its warp's (bwq_loop): its portals' count,
// table offset and slots, which no run writes, and their marks, which only its runs lower: a
// mark read before the last run's are visible is higher, and lists a portal as fallen that
// was applied already, which applying again leaves unchanged. One round trip (slots past the
// count are loaded and not used: they go out before the count arrives).
struct PtHead {
    u32 k;
    u64 dbase;
    u32 in_c[PT_CHUNKS], mark_c[PT_CHUNKS];
};

__device__ __forceinline__ PtHead pt_head(const PortalArgs &p, u32 t) {
    const u32 lane = threadIdx.x & 31;
    const u64 base = (u64)t * PT_MAX;
    PtHead h;
    h.k = p.pcount[t];
    h.dbase = p.doff[t];
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        h.in_c[c] = p.pinfo[base + c * 32 + lane];
        h.mark_c[c] = __ldcg(&p.mark[base + c * 32 + lane]);
    }
    return h;
}

// One run of tile t over its portals from its head h (lab, info, fallen: this warp's PT_MAX
// words each of shared memory); returns bit k set when the tile in direction k had a cell
// lowered.
__device__ u32 pt_run(const PortalArgs &p, u32 t, const PtHead &h, u32 *lab, u32 *info,
                      u32 *fallen) {
    const BitwaveQueueArgs &a = p.q;
    const u32 lane = threadIdx.x & 31;
    const u64 base = (u64)t * PT_MAX;
    const u32 k = h.k;
    const u64 dbase = h.dbase;
    const u32(&in_c)[PT_CHUNKS] = h.in_c;
    const u32(&mark_c)[PT_CHUNKS] = h.mark_c;
    if (k == 0) return 0;
    const u32 x0 = (t % a.tiles_x) * 64, y0 = (t / a.tiles_x) * 32;
    // One round trip for the portals' labels, and beside them the labels of the cells they
    // move to in other tiles (target[c][d]: portal c * 32 + lane, direction d), so that offers
    // below need not wait for an answer. Every chunk's loads go out before any is used. The per-chunk
    // arrays are set whole first: the loops stop at the count (uniform: a maze tile's portals
    // fill one or two chunks).
    u32 l_c[PT_CHUNKS], target[PT_CHUNKS][8], changed[PT_CHUNKS], any = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        l_c[c] = UNREACHED;
        changed[c] = 0;
    }
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        if (c * 32 >= k) break;
        if (c * 32 + lane < k) {
            const u32 in = in_c[c], cell = in & 0xffffu, out = in >> 16;
            const u32 cx = x0 + cell % 64, cy = y0 + cell / 64;
            l_c[c] = __ldcg(&a.labels[(u64)cy * a.w + cx]);
#pragma unroll
            for (u32 d = 0; d < 8; ++d)
                target[c][d] = (out >> d) & 1u
                                   ? __ldcg(&a.labels[(u64)(cy + DY[d]) * a.w + cx + DX[d]])
                                   : 0u;
        }
    }
    // Which labels fell since this tile last applied them: listed in `fallen` (in order).
    u32 nfallen = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        if (c * 32 >= k) break;
        const u32 j = c * 32 + lane;
        const bool fell = j < k && l_c[c] < mark_c[c];
        if (j < k) {
            info[j] = in_c[c];
            lab[j] = l_c[c];
        }
        changed[c] = __ballot_sync(FULL_MASK, fell);
        if (fell) fallen[nfallen + __popc(changed[c] & ((1u << lane) - 1))] = j;
        nfallen += __popc(changed[c]);
    }
    if (nfallen == 0) return 0;
    __syncwarp();
    u32 best[PT_CHUNKS];
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) best[c] = l_c[c];
    pt_through_table<PT_ROWS>(p.dist + dbase, k, fallen, nfallen, lab, best);
    // Lower what the table improved; then every portal that fell or was lowered offers its
    // label + 1 to the cells it moves to in other tiles, where that beats what they held when
    // loaded above. Labels only fall, so a cell that held as little needs nothing; one that
    // fell since, below the offer, leaves the atomicMin without effect and its tile runs once
    // for nothing. Neither atomic's answer is awaited.
    u32 flags = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        const u32 j = c * 32 + lane;
        if (c * 32 >= k) break;
        if (j >= k) continue;
        const u32 in = info[j], cell = in & 0xffffu;
        const u32 cx = x0 + cell % 64, cy = y0 + cell / 64;
        u32 l = lab[j];
        bool offer = (changed[c] >> lane) & 1u;
        if (best[c] < l) {
            atomicMin(&a.labels[(u64)cy * a.w + cx], best[c]);
            l = best[c];
            offer = true;
        }
        if (!offer) continue;
        p.mark[base + j] = l;
        const u32 out = in >> 16;
#pragma unroll
        for (u32 d = 0; d < 8; ++d) {
            if (!((out >> d) & 1u) || target[c][d] <= l + 1) continue;
            const u32 nx = cx + DX[d], ny = cy + DY[d];
            atomicMin(&a.labels[(u64)ny * a.w + nx], l + 1);
            const int dx = nx < x0 ? -1 : (nx >= x0 + 64 ? 1 : 0);
            const int dy = ny < y0 ? -1 : (ny >= y0 + 32 ? 1 : 0);
            flags |= 1u << pt_dir(dx, dy);
        }
    }
    return __reduce_or_sync(FULL_MASK, flags);
}

extern "C" __global__ void lee_portal_queue(const PortalArgs p) {
    extern __shared__ u32 smem[];
    u32 *lab = smem + (threadIdx.x >> 5) * PT_WARP_WORDS, *info = lab + PT_MAX,
        *fallen = info + PT_MAX;
    bwq_loop(
        p.q, [&](u32 t) { return pt_head(p, t); },
        [&](u32 t, const PtHead &h) { return pt_run(p, t, h, lab, info, fallen); });
}

// Every tile filled from its border cells' labels (final at the portals) and the goal.
extern "C" __global__ void lee_portal_fill(const BitwaveQueueArgs a) {
    extern __shared__ u32 smem[];
    u32 *old = smem + (threadIdx.x >> 5) * 32 * BW_ROW;
    PT_FOR_EACH_TILE(t, a.tiles_x * a.tiles_y)
        bw_tile<true>(a.planes, a.labels, a.w, a.h, a.wwords, a.ndirs, a.tiles_x, t, a.goal, old);
}

// ---------------------------------------------------------------------------------------------
// Portals in one block. On a maze the wave is a handful of corridors, and the portal queue's
// critical path is one tile run per tile crossed, each a chain of round trips to L2 (the
// claim, the labels, the rows, the offers, the fences around the run). Where every portal's
// label fits one SM's shared memory, one block runs the same wave with the labels, the tile
// states and the ring in shared memory: claims, labels, offers and fences stay inside the SM,
// and only the read-only slots, links and table rows come from L2 (or L1).
//
// A portal's shared word is label << 1 | dirty: the offer that lowers a label marks it with
// the same atomicMin, and the run that applies it clears the mark and reads the label with one
// atomicAnd, so a lowering is either seen by that run or queues the tile again (the offer's
// tile is told after it). Labels lowered through a tile's own table are applied by the run
// that lowers them and stay unmarked. PB_FAR: unreached, unmarked.
// Per map (lee_portal_links): plink[i * 8 + d], the portal (numbered across tiles by poff) that
// portal i's move d reaches, PB_NONE where i has no move d; pcell[i], portal i's cell.
// ---------------------------------------------------------------------------------------------

#define PB_FAR 0xfffffffeu
#define PB_EMPTY 0xffffffffu
#define PB_NONE 0xffffffffu
#define PB_DIR_SHIFT 29
// Shared control words of lee_portal_block: tickets taken and issued, tiles queued or
// running, tile runs.
#define PBQ_HEAD 0
#define PBQ_TAIL 1
#define PBQ_PENDING 2
#define PBQ_RUNS 3
#define PBQ_WORDS 4
// Table rows a run loads at once: a run here usually has one fallen portal, and each row of a
// batch costs instructions on the critical path (H100, 1000² maze: 1 row 3.79 ms, 2 rows 3.84,
// 4 rows 4.21). Waiting warps poll every 32 ns: longer naps (up to 1 µs) did not help.
#define PB_ROWS 1

// Every portal's cell and links; bad[0] set when a move reaches a cell that is not a portal
// of its tile (moves not symmetric: the wave stays on the device-wide queue). A link is the
// portal reached | the direction of its tile (pt_dir) << PB_DIR_SHIFT, so a run needs neither
// the slot nor the cell to offer and tell (total < 2^PB_DIR_SHIFT: the host checks).
extern "C" __global__ void lee_portal_links(const u32 *__restrict__ pcount,
                                            const u32 *__restrict__ poff,
                                            const u32 *__restrict__ pinfo, u32 w, u32 tiles_x,
                                            u32 ntiles, u32 total, u32 *plink, u64 *pcell,
                                            u32 *bad) {
    GRID_STRIDE(g, total) {
        u32 lo = 0, hi = ntiles;
        while (hi - lo > 1) {
            const u32 mid = (lo + hi) / 2;
            if (poff[mid] <= g) lo = mid; else hi = mid;
        }
        const u32 t = lo, in = pinfo[(u64)t * PT_MAX + (g - poff[t])];
        const u32 cell = in & 0xffffu, out = in >> 16;
        const u32 cx = (t % tiles_x) * 64 + cell % 64, cy = (t / tiles_x) * 32 + cell / 64;
        pcell[g] = (u64)cy * w + cx;
        for (u32 d = 0; d < 8; ++d) {
            u32 link = PB_NONE;
            if ((out >> d) & 1u) {
                const u32 nx = cx + DX[d], ny = cy + DY[d];
                const u32 u = (ny / 32) * tiles_x + nx / 64, want = (ny % 32) * 64 + nx % 64;
                // A tile's slots are in row-major order of their cells.
                const u32 *s = pinfo + (u64)u * PT_MAX;
                u32 a = 0, b = pcount[u];
                while (a < b) {
                    const u32 m = (a + b) / 2;
                    if ((s[m] & 0xffffu) < want) a = m + 1; else b = m;
                }
                const u32 lx = cell % 64 + DX[d], ly = cell / 64 + DY[d];
                const u32 dir = pt_dir((int)lx < 0 ? -1 : (lx >= 64 ? 1 : 0),
                                       (int)ly < 0 ? -1 : (ly >= 32 ? 1 : 0));
                if (a < pcount[u] && (s[a] & 0xffffu) == want)
                    link = (poff[u] + a) | (dir << PB_DIR_SHIFT);
                else atomicOr(bad, 1u);
            }
            plink[(u64)g * 8 + d] = link;
        }
    }
}

// lee_portal_block's arguments (src/lee/gpu/portals.rs's PortalBlockArgs, #[repr(C)], the same
// fields in the same order). ctl: the work queue's words (BWQ_*), set at the end: the tiles
// still queued when the launch stopped at visit_limit runs (0: the field is complete), and the
// runs added to BWQ_VISITS.
struct PortalBlockArgs {
    u32 *labels;
    const u32 *pcount, *poff, *plink;
    const u64 *doff, *pcell;
    const unsigned short *dist;
    u32 *ctl;
    u32 ntiles, total, tiles_x, tiles_y, ndirs, visit_limit;
};

__device__ __forceinline__ void pb_push(u32 *q, u32 *ring, u32 ntiles, u32 t) {
    atomicAdd(&q[PBQ_PENDING], 1u);
    volatile u32 *slot = &ring[atomicAdd(&q[PBQ_TAIL], 1u) % ntiles];
    // The ring holds each tile at most once; a slot's last entry may still be on its way out.
    while (*slot != PB_EMPTY) {
    }
    *slot = t;
}

// Lane 0: the next tile, or BWQ_EXIT when nothing is queued or running, or the launch ran its
// runs.
__device__ __forceinline__ u32 pb_take(u32 *q, u32 *ring, u32 ntiles, u32 visit_limit, u64 t0) {
    volatile u32 *vq = q;
    while (true) {
        if (vq[PBQ_RUNS] >= visit_limit) return BWQ_EXIT;
        if (global_ns() - t0 > LEE_LAUNCH_NS) return BWQ_EXIT;
        const u32 h = vq[PBQ_HEAD];
        if ((int)(vq[PBQ_TAIL] - h) > 0) {
            if (atomicCAS(&q[PBQ_HEAD], h, h + 1) != h) continue;
            volatile u32 *slot = &ring[h % ntiles];
            u32 t;
            while ((t = *slot) == PB_EMPTY) {
            }
            *slot = PB_EMPTY;
            return t;
        }
        if (vq[PBQ_PENDING] == 0) return BWQ_EXIT;
        __nanosleep(32);
    }
}

// One run of tile t (pt_run's steps on shared labels; head: the tiles' portal counts, first
// portals and table offsets; fallen and flab: this warp's PT_MAX words each); returns bit k
// set when the tile in direction k had a portal lowered. Its only global loads, the links and
// the table rows, go out together: one round trip to L2 per run.
__device__ u32 pb_run(const PortalBlockArgs &p, u32 t, const u32 *head, u32 *lab, u32 *fallen,
                      u32 *flab) {
    const u32 lane = threadIdx.x & 31, ntiles = p.ntiles;
    const u32 k = head[t];
    if (k == 0) return 0;
    const u32 base = head[ntiles + t], dbase = head[2 * ntiles + t];
    u32 link[PT_CHUNKS][8];
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
#pragma unroll
        for (u32 d = 0; d < 8; ++d) link[c][d] = PB_NONE;
        if (c * 32 >= k) continue;
        if (c * 32 + lane < k) {
            const uint4 *l4 = reinterpret_cast<const uint4 *>(p.plink + (u64)(base + c * 32 + lane) * 8);
            const uint4 a = l4[0], b = l4[1];
            link[c][0] = a.x; link[c][1] = a.y; link[c][2] = a.z; link[c][3] = a.w;
            link[c][4] = b.x; link[c][5] = b.y; link[c][6] = b.z; link[c][7] = b.w;
        }
    }
    // Claim the marks: the portals that fell since this tile last applied them.
    u32 l_c[PT_CHUNKS], changed[PT_CHUNKS], best[PT_CHUNKS];
    u32 nfallen = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        l_c[c] = PB_FAR >> 1;
        changed[c] = 0;
        if (c * 32 >= k) continue;
        const u32 j = c * 32 + lane;
        bool fell = false;
        if (j < k) {
            const u32 e = atomicAnd(&lab[base + j], ~1u);
            l_c[c] = e >> 1;
            flab[j] = e >> 1;
            fell = e & 1u;
        }
        changed[c] = __ballot_sync(FULL_MASK, fell);
        if (fell) fallen[nfallen + __popc(changed[c] & ((1u << lane) - 1))] = j;
        nfallen += __popc(changed[c]);
    }
    if (nfallen == 0) return 0;
    __syncwarp();
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) best[c] = l_c[c];
    pt_through_table<PB_ROWS>(p.dist + dbase, k, fallen, nfallen, flab, best);
    // Lower what the table improved; every portal that fell or was lowered offers its label
    // + 1 to the portals it moves to in other tiles.
    volatile u32 *vlab = lab;
    u32 flags = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        if (c * 32 >= k) break;
        const u32 j = c * 32 + lane;
        if (j >= k) continue;
        u32 l = l_c[c];
        bool offer = (changed[c] >> lane) & 1u;
        if (best[c] < l) {
            atomicMin(&lab[base + j], best[c] << 1);
            l = best[c];
            offer = true;
        }
        if (!offer) continue;
        const u32 e = ((l + 1) << 1) | 1u;
#pragma unroll
        for (u32 d = 0; d < 8; ++d) {
            if (link[c][d] == PB_NONE) continue;
            const u32 g = link[c][d] & ((1u << PB_DIR_SHIFT) - 1);
            // Not awaited: where the label fell below the offer since it was read, the
            // tile runs once for nothing.
            if (vlab[g] >> 1 <= l + 1) continue;
            atomicMin(&lab[g], e);
            flags |= 1u << (link[c][d] >> PB_DIR_SHIFT);
        }
    }
    return __reduce_or_sync(FULL_MASK, flags);
}

// The portal wave of one grid in one block (blockDim.x = PB_THREADS), from the labels the
// goal's round left at the portals, which it lowers in place; dynamic shared memory: the
// control words, a word per portal, the tile states, the ring and the tiles' heads (portal
// counts, first portals, table offsets: ntiles words each), then 2 x PT_MAX words per warp. A tile's state and the pending count work as on the device-wide queue.
extern "C" __global__ void __launch_bounds__(PB_THREADS) lee_portal_block(const PortalBlockArgs p) {
    extern __shared__ u32 smem[];
    u32 *q = smem, *lab = q + PBQ_WORDS, *state = lab + p.total, *ring = state + p.ntiles;
    u32 *head = ring + p.ntiles;
    u32 *fallen = head + 3 * p.ntiles + (threadIdx.x >> 5) * 2 * PT_MAX, *flab = fallen + PT_MAX;
    const u32 lane = threadIdx.x & 31, ntiles = p.ntiles;
    const u64 t0 = global_ns();
    if (threadIdx.x < PBQ_WORDS) q[threadIdx.x] = 0;
    for (u32 i = threadIdx.x; i < p.total; i += blockDim.x) {
        const u32 l = __ldcg(&p.labels[p.pcell[i]]);
        lab[i] = l == UNREACHED ? PB_FAR : (l << 1) | 1u;
    }
    for (u32 t = threadIdx.x; t < ntiles; t += blockDim.x) {
        state[t] = 0;
        ring[t] = PB_EMPTY;
        head[t] = p.pcount[t];
        head[ntiles + t] = p.poff[t];
        head[2 * ntiles + t] = (u32)p.doff[t];
    }
    __syncthreads();
    // The tiles with a reached portal go first: the goal's (or, after a launch stopped at its
    // budget, every tile its wave reached, all of whose labels count as fallen again).
    for (u32 t = threadIdx.x; t < ntiles; t += blockDim.x) {
        const u32 base = head[ntiles + t], end = base + head[t];
        bool reached = false;
        for (u32 i = base; i < end && !reached; ++i) reached = lab[i] != PB_FAR;
        if (reached) {
            state[t] = BWQ_QUEUED;
            pb_push(q, ring, ntiles, t);
        }
    }
    __syncthreads();
    // As bwq_loop: a warp that tells an idle neighbour runs it next itself (the others go on
    // the ring), and runs its tile again when a neighbour queued it meanwhile.
    u32 kept = BWQ_EXIT;
    while (true) {
        u32 t = kept;
        if (t == BWQ_EXIT) {
            t = lane == 0 ? pb_take(q, ring, ntiles, p.visit_limit, t0) : 0u;
            t = __shfl_sync(FULL_MASK, t, 0);
            if (t == BWQ_EXIT) break;
            if (lane == 0) atomicExch(&state[t], BWQ_RUNNING);
        }
        // The labels are claimed after the tile is marked running: an offer the run misses
        // sets QUEUED, and the tile runs again.
        __threadfence_block();
        __syncwarp();
        const u32 flags = pb_run(p, t, head, lab, fallen, flab);
        // The offers land before any neighbour is told of them.
        __threadfence_block();
        __syncwarp();
        u32 end = BWQ_RUNNING;
        if (lane == 0) {
            atomicAdd(&q[PBQ_RUNS], 1u);
            end = atomicCAS(&state[t], BWQ_RUNNING, 0u);
        }
        const u32 nb = bw_neighbour(t, flags, lane, p.ndirs, p.tiles_x, p.tiles_y);
        const u32 told = __ballot_sync(FULL_MASK, nb != UNREACHED);
        const u32 first = told ? __ffs(told) - 1 : 0u;
        bool claimed = false;
        if (nb != UNREACHED) {
            if (lane == first) claimed = atomicCAS(&state[nb], 0u, BWQ_RUNNING) == 0u;
            if (!claimed && atomicOr(&state[nb], BWQ_QUEUED) == 0u) pb_push(q, ring, ntiles, nb);
        }
        const u32 claim = __ballot_sync(FULL_MASK, claimed);
        kept = claim ? __shfl_sync(FULL_MASK, nb, first) : BWQ_EXIT;
        const bool again = __shfl_sync(FULL_MASK, end, 0) != BWQ_RUNNING;
        if (again && kept == BWQ_EXIT) {
            // Queued while it ran: run again, in the same place in the count.
            if (lane == 0) atomicExch(&state[t], BWQ_RUNNING);
            kept = t;
        } else if (lane == 0) {
            if (again) {
                atomicExch(&state[t], BWQ_QUEUED);
                pb_push(q, ring, ntiles, t);
            }
            // Pending - 1 for t after its neighbours' + 1, so the count cannot reach 0
            // between, unless the claimed tile takes its place.
            if (kept == BWQ_EXIT) atomicSub(&q[PBQ_PENDING], 1u);
        }
        __syncwarp();
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < p.total; i += blockDim.x) {
        const u32 e = lab[i];
        if (e != PB_FAR) p.labels[p.pcell[i]] = e >> 1;
    }
    if (threadIdx.x == 0) {
        p.ctl[BWQ_HEAD] = 0;
        p.ctl[BWQ_PENDING] = q[PBQ_PENDING];
        p.ctl[BWQ_TAIL] = 0;
        p.ctl[BWQ_VISITS] += q[PBQ_RUNS];
    }
}

