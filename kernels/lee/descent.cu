// The Lee module's descent part: compiled after kernels/lee/wave.cu (whose header says how the
// module is put together), with its definitions in scope.
// ---------------------------------------------------------------------------------------------
// Path: the block stages a DW x DW window of labels and masks in shared memory, placed ahead
// of the current cell towards the goal; all threads find each cell's next cell (the fixed
// neighbour priority), and one thread follows them until a step needs a neighbour outside the
// window; then the window moves. A dependent global load per step would cost a memory latency
// each; this costs one per window. state[STATE_STATUS]: DESCENT_OK, DESCENT_BROKEN (the labels
// have no descent), DESCENT_UNREACHED (start unreached), DESCENT_LONG (longer than `long_from`
// moves: left to the jumps below) or DESCENT_TOO_LONG (the path does not fit `cap` cells);
// state[STATE_LENGTH]: the path's length in moves. path[i]: its i-th cell.
// ---------------------------------------------------------------------------------------------

extern "C" __global__ void lee_descend(const u8 *__restrict__ masks, const u32 *__restrict__ labels,
                                       u32 w, u32 h, u32 ndirs, u64 start, u64 goal, u32 *path,
                                       u32 cap, u32 long_from, u32 *state) {
    __shared__ u32 sl[DW * DW];
    __shared__ u8 sm[DW * DW];
    // Each window cell's next cell on the descent, found by all threads at once, so that the
    // walk itself is one shared load per step.
    __shared__ unsigned short succ[DW * DW];
    __shared__ u64 s_cell;
    __shared__ u32 s_step, s_done;
    const u32 tid = threadIdx.x;
    const u32 len = labels[start];
    const long long gx = (long long)(goal % w), gy = (long long)(goal / w);
    if (tid == 0) {
        s_cell = start;
        s_step = 0;
        const u32 status = len == UNREACHED  ? DESCENT_UNREACHED
                           : len > long_from ? DESCENT_LONG
                           : len >= cap      ? DESCENT_TOO_LONG
                                             : DESCENT_OK;
        s_done = status != DESCENT_OK;
        state[STATE_STATUS] = status;
        state[STATE_LENGTH] = len;
        if (status == DESCENT_OK) path[0] = (u32)start;
    }
    __syncthreads();
    while (!s_done) {
        const u64 c = s_cell;
        const long long cx = (long long)(c % w), cy = (long long)(c / w);
        const long long ox = window_origin(cx, gx, w), oy = window_origin(cy, gy, h);
        for (u32 i = tid; i < DW * DW; i += blockDim.x) {
            const long long x = ox + i % DW, y = oy + i / DW;
            const bool in = x < w && y < h;
            sl[i] = in ? labels[(u64)y * w + x] : UNREACHED;
            sm[i] = in ? masks[(u64)y * w + x] : 0;
        }
        __syncthreads();
        for (u32 i = tid; i < DW * DW; i += blockDim.x) {
            const u32 l = sl[i], m = sm[i];
            const int lx = (int)(i % DW), ly = (int)(i / DW);
            u32 next = SUCC_GOAL;
            if (l != 0 && l != UNREACHED) {
                next = SUCC_NONE;
                for (u32 k = 0; k < ndirs; ++k) {
                    if (!(m & (1u << k))) continue;
                    const int nx = lx + DX[k], ny = ly + DY[k];
                    // Off-grid neighbours are never allowed, so at the grid's edge a cell on
                    // the window's border still has its successor here.
                    if (nx < 0 || ny < 0 || nx >= DW || ny >= DW) {
                        next = SUCC_OUT;
                        break;
                    }
                    if (sl[ny * DW + nx] == l - 1) {
                        next = (u32)(ny * DW + nx);
                        break;
                    }
                }
            }
            succ[i] = (unsigned short)next;
        }
        __syncthreads();
        if (tid == 0) {
            u32 at = (u32)((cy - oy) * DW + (cx - ox)), step = s_step;
            bool broken = false;
            while (step < len) {
                const u32 next = succ[at];
                if (next == SUCC_OUT) break; // move the window
                if (next >= SUCC_GOAL) {
                    broken = true;
                    break;
                }
                at = next;
                ++step;
                path[step] = (u32)((u64)(oy + at / DW) * w + (u64)(ox + at % DW));
            }
            s_step = step;
            s_cell = (u64)(oy + at / DW) * w + (u64)(ox + at % DW);
            if (broken) state[STATE_STATUS] = DESCENT_BROKEN;
            s_done = broken || step >= len;
        }
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------
// Long paths (a maze's path is millions of moves, and the window descent above walks them one
// dependent step at a time): every cell's next cell (lee_next, the same neighbour priority),
// that map squared K times (lee_jump: 2^K moves at once), one thread hopping from the start in
// jumps of 2^K to place a checkpoint every 2^K path cells (lee_checkpoints), then one thread
// per checkpoint walking its 2^K cells (lee_walk_segments). With 2^K about sqrt(length), both
// sequential chains are about sqrt(length) loads long instead of length.
// NEXT_NONE: no next cell (unreached, or labels that have no descent); the goal is its own.
// ---------------------------------------------------------------------------------------------

#define NEXT_NONE 0xffffffffu

extern "C" __global__ void lee_next(const u8 *__restrict__ masks, const u32 *__restrict__ labels,
                                    u32 w, u32 h, u32 ndirs, u32 *next) {
    const u64 n = (u64)w * h;
    GRID_STRIDE(i, n) {
        const u32 l = labels[i];
        u32 to = NEXT_NONE;
        if (l == 0) {
            to = (u32)i;
        } else if (l != UNREACHED) {
            const u32 m = masks[i];
            const long long x = (long long)(i % w), y = (long long)(i / w);
            for (u32 k = 0; k < ndirs; ++k) {
                if (!(m & (1u << k))) continue;
                // Masks never allow a move off the grid, so the neighbour is inside it.
                const u64 j = (u64)(y + DY[k]) * w + (u64)(x + DX[k]);
                if (labels[j] == l - 1) {
                    to = (u32)j;
                    break;
                }
            }
        }
        next[i] = to;
    }
}

extern "C" __global__ void lee_jump(const u32 *__restrict__ from, u32 *to, u64 n) {
    GRID_STRIDE(i, n) {
        const u32 a = from[i];
        to[i] = a == NEXT_NONE ? NEXT_NONE : from[a];
    }
}

// One thread: path[i * stride] for every checkpoint i, from `start` by `jump` (next^stride).
extern "C" __global__ void lee_checkpoints(const u32 *__restrict__ jump, u64 start, u32 len,
                                           u32 stride, u32 *path, u32 *state) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    state[STATE_STATUS] = DESCENT_OK;
    u32 c = (u32)start;
    for (u32 s = 0; s <= len; s += stride) {
        if (c == NEXT_NONE) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        path[s] = c;
        if (len - s < stride) break;
        c = jump[c];
    }
}

// Thread i: the path cells after checkpoint i, up to the next checkpoint or the path's end.
extern "C" __global__ void lee_walk_segments(const u32 *__restrict__ next, u32 len, u32 stride,
                                             u32 *path, u32 *state) {
    const u64 first = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * stride;
    // A broken chain left the checkpoints unwritten.
    if (first > len || state[STATE_STATUS] != DESCENT_OK) return;
    u32 c = path[first];
    const u64 last = min((u64)len, first + stride - 1);
    for (u64 s = first + 1; s <= last; ++s) {
        c = c == NEXT_NONE ? NEXT_NONE : next[c];
        if (c == NEXT_NONE) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        path[s] = c;
    }
}

// ---------------------------------------------------------------------------------------------
// Long paths over tiles. The path's cell i has label len - i, so where a cell lies on the path
// follows from its label; only which cells are on it needs the walk. The grid is cut into
// DT x DT tiles (frames at multiples of DT). lee_tile_exits: one block a tile finds every
// cell's successor (the neighbour priority of lee_next) from the tile's labels and a one-cell
// halo in shared memory, and follows them from each of the tile's DT_BORDER border cells (a
// path enters a tile by no other) to the border cell by which that path enters the next tile:
// the node of a graph 252/4096 the grid's size. The goal is one more node, its own successor.
// That graph's chain from the start is cut as the cells' chain is above (lee_jump over nodes,
// then lee_hop_checkpoints, lee_hop_segments: the tile entries in order), and lee_tile_fill
// walks each entry's tile in shared memory, a block a visit, writing each cell at its label's
// index. The grid is read once, not once per doubling, and the dependent loads are hops
// between tiles, not moves.
// state[STATE_HOP_FIRST]: the node after the start; state[STATE_CHECKPOINTS]: how many;
// state[STATE_HOPS]: the tile visits (entries, the start's first).
// ---------------------------------------------------------------------------------------------

#define DT_HALO (DT + 2)
#define DT_BORDER (4 * DT - 4)
// tile_successors' answer for a move into another tile: DT_OUT | its direction (below
// SUCC_GOAL and SUCC_NONE, above every local index).
#define DT_OUT 0xfff0u
#if !defined(DT) || !defined(DT_THREADS) || !defined(STATE_HOPS)
#error "kernels/lee/ is compiled with the constants src/lee/gpu.rs defines"
#endif
#if DT * DT > DT_OUT
#error "a tile's local indices lie below DT_OUT"
#endif

// Items a thread stages: every load is issued before the first store, so a block waits out one
// memory round trip per stage, not one per item.
#define DT_LABEL_ITEMS ((DT_HALO * DT_HALO + DT_THREADS - 1) / DT_THREADS)
#define DT_MASK_ITEMS (DT * DT / DT_THREADS)
#if DT * DT % DT_THREADS != 0 || DT_MASK_ITEMS > 32
#error "a tile's cells are DT_THREADS x (at most 32) items"
#endif

// The labels of the tile at (ox, oy) and a one-cell halo (UNREACHED off the grid), and the
// tile's masks (0 off the grid); blockDim.x = DT_THREADS.
__device__ void tile_stage(const u32 *__restrict__ labels, const u8 *__restrict__ masks, u32 w,
                           u32 h, u32 ox, u32 oy, u32 *hl, u8 *hm) {
    u32 l[DT_LABEL_ITEMS];
    u8 m[DT_MASK_ITEMS];
#pragma unroll
    for (u32 r = 0; r < DT_LABEL_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        const long long x = (long long)ox + (long long)(i % DT_HALO) - 1;
        const long long y = (long long)oy + (long long)(i / DT_HALO) - 1;
        l[r] = i < DT_HALO * DT_HALO && x >= 0 && y >= 0 && x < w && y < h
                   ? labels[(u64)y * w + x]
                   : UNREACHED;
    }
#pragma unroll
    for (u32 r = 0; r < DT_MASK_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        const u32 x = ox + i % DT, y = oy + i / DT;
        m[r] = i < DT * DT && x < w && y < h ? masks[(u64)y * w + x] : 0;
    }
#pragma unroll
    for (u32 r = 0; r < DT_LABEL_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        if (i < DT_HALO * DT_HALO) hl[i] = l[r];
    }
#pragma unroll
    for (u32 r = 0; r < DT_MASK_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        if (i < DT * DT) hm[i] = m[r];
    }
}

// Every cell's successor in the staged tile (the neighbour priority of lee_next): a local index,
// DT_OUT | the direction of a move into another tile, SUCC_GOAL, or SUCC_NONE (unreached, off
// the grid, no allowed neighbour one label lower). A cell's neighbours are read at once and
// the first in the priority taken, so its answer waits for one round trip to shared memory.
__device__ void tile_successors(const u32 *hl, const u8 *hm, u32 w, u32 h, u32 ndirs, u32 ox,
                                u32 oy, unsigned short *succ) {
    const u32 allowed = (1u << ndirs) - 1;
#pragma unroll
    for (u32 r = 0; r < DT_MASK_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        const int lx = (int)(i % DT), ly = (int)(i / DT);
        const u32 c = (ly + 1) * DT_HALO + lx + 1;
        const u32 l = hl[c];
        u32 lower = 0;
#pragma unroll
        for (u32 k = 0; k < 8; ++k)
            if (k < ndirs) lower |= (u32)(hl[(int)c + DY[k] * DT_HALO + DX[k]] == l - 1) << k;
        // Masks never allow a move off the grid, so an allowed neighbour is in the halo.
        lower &= hm[i] & allowed;
        unsigned short s = SUCC_NONE;
        if (ox + lx >= w || oy + ly >= h || l == UNREACHED) {
            s = SUCC_NONE;
        } else if (l == 0) {
            s = SUCC_GOAL;
        } else if (lower) {
            const u32 k = __ffs(lower) - 1;
            const int nx = lx + DX[k], ny = ly + DY[k];
            s = nx < 0 || ny < 0 || nx >= DT || ny >= DT ? (unsigned short)(DT_OUT | k)
                                                         : (unsigned short)(ny * DT + nx);
        }
        succ[i] = s;
    }
}

// Border slot of frame cell (lx, ly): the top row, the bottom row, then the left and right
// columns without their corners.
__device__ __forceinline__ u32 border_slot(u32 lx, u32 ly) {
    return ly == 0        ? lx
           : ly == DT - 1 ? DT + lx
           : lx == 0      ? 2 * DT + ly - 1
                          : 3 * DT - 2 + ly - 1;
}

__device__ __forceinline__ void slot_cell(u32 b, u32 &lx, u32 &ly) {
    if (b < DT) {
        lx = b; ly = 0;
    } else if (b < 2 * DT) {
        lx = b - DT; ly = DT - 1;
    } else if (b < 3 * DT - 2) {
        lx = 0; ly = b - 2 * DT + 1;
    } else {
        lx = DT - 1; ly = b - (3 * DT - 2) + 1;
    }
}

__device__ __forceinline__ u32 cell_node(u64 x, u64 y, u32 tiles_x) {
    return (u32)(((y / DT) * tiles_x + x / DT) * DT_BORDER + border_slot(x % DT, y % DT));
}

__device__ __forceinline__ u64 node_cell(u32 node, u32 w, u32 tiles_x) {
    const u32 t = node / DT_BORDER;
    u32 lx, ly;
    slot_cell(node % DT_BORDER, lx, ly);
    return ((u64)(t / tiles_x) * DT + ly) * w + (u64)(t % tiles_x) * DT + lx;
}

// Grid (tiles_x, tiles_y), DT_THREADS threads: exits[node] for every border cell of the tile
// (NEXT_NONE where no path leaves it), exits[goal node] = the goal node, and the start's. Each
// border cell (and the start) follows its successors to where its path leaves the tile: a
// tile's chains are tens of moves on open ground, and no cell but these needs an answer.
extern "C" __global__ void __launch_bounds__(DT_THREADS)
    lee_tile_exits(const u8 *__restrict__ masks, const u32 *__restrict__ labels, u32 w, u32 h,
                   u32 ndirs, u64 start, u32 *exits, u32 *state) {
    __shared__ u32 hl[DT_HALO * DT_HALO];
    __shared__ unsigned short succ[DT * DT];
    __shared__ u8 hm[DT * DT];
    const u32 tiles_x = gridDim.x, tile = blockIdx.y * tiles_x + blockIdx.x;
    const u32 goal_node = tiles_x * gridDim.y * DT_BORDER;
    const u32 ox = blockIdx.x * DT, oy = blockIdx.y * DT;
    tile_stage(labels, masks, w, h, ox, oy, hl, hm);
    __syncthreads();
    tile_successors(hl, hm, w, h, ndirs, ox, oy, succ);
    __syncthreads();
    const u64 sx = start % w, sy = start / w;
    const bool has_start = sx / DT == blockIdx.x && sy / DT == blockIdx.y;
    for (u32 b = threadIdx.x; b <= DT_BORDER; b += blockDim.x) {
        u32 at;
        if (b < DT_BORDER) {
            u32 lx, ly;
            slot_cell(b, lx, ly);
            at = ly * DT + lx;
        } else if (has_start) {
            at = (u32)((sy % DT) * DT + sx % DT);
        } else {
            continue;
        }
        // Labels fall along successors, so the chain ends.
        u32 s = succ[at];
        while (s < DT * DT) {
            at = s;
            s = succ[at];
        }
        const u32 v = s == SUCC_GOAL   ? goal_node
                      : s == SUCC_NONE ? NEXT_NONE
                                       : cell_node(ox + at % DT + DX[s & 7u], oy + at / DT + DY[s & 7u], tiles_x);
        if (b < DT_BORDER) {
            exits[tile * DT_BORDER + b] = v;
        } else {
            state[STATE_HOP_FIRST] = v;
        }
    }
    if (tile == 0 && threadIdx.x == 0) exits[goal_node] = goal_node;
}

// One thread: the node chain from the start's first node hopping `jump` (exits^stride), at most
// `cap` checkpoints; lowers nothing else, so the segments find the visits' count.
extern "C" __global__ void lee_hop_checkpoints(const u32 *__restrict__ jump, u32 goal_node, u32 cap,
                                               u32 *checkpoints, u32 *state) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    state[STATE_STATUS] = DESCENT_OK;
    state[STATE_HOPS] = UNREACHED;
    u32 x = state[STATE_HOP_FIRST], i = 0;
    while (true) {
        // Labels fall along every hop, so a chain ends; only a broken field breaks it.
        if (x == NEXT_NONE || i == cap) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        checkpoints[i++] = x;
        if (x == goal_node) break;
        x = jump[x];
    }
    state[STATE_CHECKPOINTS] = i;
}

// Thread i: the tile entries after checkpoint i, up to the next checkpoint or the goal node;
// hops[0] is the start. The first thread to meet the goal node sets the count.
extern "C" __global__ void lee_hop_segments(const u32 *__restrict__ exits,
                                            const u32 *__restrict__ checkpoints, u32 stride,
                                            u32 goal_node, u32 w, u32 tiles_x, u64 start,
                                            u32 *hops, u32 *state) {
    const u64 i = grid_first();
    if (state[STATE_STATUS] != DESCENT_OK || i >= state[STATE_CHECKPOINTS]) return;
    if (i == 0) hops[0] = (u32)start;
    u32 x = checkpoints[i];
    const u64 first = 1 + i * stride;
    for (u32 j = 0; j < stride; ++j) {
        if (x == goal_node) {
            atomicMin(&state[STATE_HOPS], (u32)(first + j));
            return;
        }
        if (x == NEXT_NONE) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        hops[first + j] = (u32)node_cell(x, w, tiles_x);
        x = exits[x];
    }
}

// A block a tile visit (grid-stride over the count): the visit's cells from its entry to where
// the path leaves the tile (or ends), each at path[len - its label].
extern "C" __global__ void __launch_bounds__(DT_THREADS)
    lee_tile_fill(const u8 *__restrict__ masks, const u32 *__restrict__ labels, u32 w, u32 h,
                  u32 ndirs, const u32 *__restrict__ hops, u32 len, u32 *path, u32 *state) {
    __shared__ u32 hl[DT_HALO * DT_HALO];
    __shared__ unsigned short succ[DT * DT];
    __shared__ u8 hm[DT * DT];
    __shared__ u32 s_count;
    // Read once for the block: another block may mark the descent broken meanwhile.
    if (threadIdx.x == 0) s_count = state[STATE_STATUS] == DESCENT_OK ? state[STATE_HOPS] : 0;
    __syncthreads();
    const u32 count = s_count;
    for (u32 q = blockIdx.x; q < count; q += gridDim.x) {
        const u32 c = hops[q];
        const u32 cx = c % w, cy = c / w, ox = cx / DT * DT, oy = cy / DT * DT;
        tile_stage(labels, masks, w, h, ox, oy, hl, hm);
        __syncthreads();
        tile_successors(hl, hm, w, h, ndirs, ox, oy, succ);
        __syncthreads();
        if (threadIdx.x == 0) {
            u32 at = (cy - oy) * DT + (cx - ox);
            u32 l = hl[(at / DT + 1) * DT_HALO + at % DT + 1];
            while (true) {
                if (l > len) {
                    state[STATE_STATUS] = DESCENT_BROKEN;
                    break;
                }
                path[len - l] = (u32)((u64)(oy + at / DT) * w + ox + at % DT);
                const u32 next = succ[at];
                if (next >= DT * DT) {
                    if (next == SUCC_NONE) state[STATE_STATUS] = DESCENT_BROKEN;
                    break; // left the tile, or the goal
                }
                at = next;
                --l;
            }
        }
        __syncthreads();
    }
}
