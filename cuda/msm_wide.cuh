// A Pippenger driver of our own over sppark's MSM kernels (breakdown, sort,
// batch_addition), for MSMs of more than 2^17 points on either lane. sppark's msm_t
// cuts an MSM into batches of at most 2^24 points, with a host round trip and
// a reduction of every window's buckets after each, that reduction in one
// block per window (integrate), and its accumulate gives each thread a
// bucket, so a warp runs as long as its fullest bucket (Poisson counts: at
// 2^25 points and 18 bits a warp takes about 1/0.89 of the mean, at 22 bits
// 1/0.63). Here a batch is as long as 2^26 points, each thread adds a run of
// CHUNK sorted points whatever buckets they fall in (accumulate_chunks, then
// add_carries for the buckets that cross runs), and the buckets are reduced
// by every SM (segment_sums). Wider windows then pay: on an H200, 2^27 random
// scalars take 0.79x sppark's time at 20 bits.
//
// Included by msm.cu after <msm/pippenger.cuh>, whose kernels it launches.

#ifndef __CUZK_MSM_WIDE_CUH__
#define __CUZK_MSM_WIDE_CUH__

#include <chrono>
#include <thread>
#include <vector>

// Scalars per batch: digits take 4 B per point and window, sort's scratch 16
// B, carries 192 B per window and CHUNK points (6.6 GB at 20 bits). Each
// batch costs a reduction and a host round trip.
constexpr size_t WIDE_BATCH_MAX = (size_t)1 << 26;

// A window's buckets after accumulate: bucket k holds the points of digit
// (k >> step) + 1, where step is 0 but in the top window of lsbits < wbits
// bits (sort spreads its digits 2^(wbits - lsbits) apart). The window's sum
// Q(v, step) = Σ_k ((k >> step) + 1)·v[k] is reduced on the device in two
// levels of segments, then on the host. For segments of L = 2^l buckets,
// w[t] = Σ_j ((j >> step) + 1)·v[tL + j] and p[t] = Σ_j v[tL + j] give
//   Q(v, step) = Σ_t w[t] + 2^max(l - step, 0)·(Q(p, max(step - l, 0)) - Σ_t p[t]),
// since bucket tL + j's weight is ((tL) >> step) + ((j >> step) + 1).
constexpr uint32_t LEVEL1_SEGMENTS_LG = 14;   // segments per window, at most
constexpr uint32_t LEVEL2_SEGMENTS_LG = 8;    // segments per window after level 2
constexpr uint32_t PLAIN = 31;                // a step no index reaches: w = p
// The narrowest window: 2^(WIDE_MIN_BITS - 1) buckets fill the last level.
constexpr uint32_t WIDE_MIN_BITS = LEVEL2_SEGMENTS_LG + 2;

// The item this thread works on, its block |first_block| blocks into the
// grid: in G2 (degree 2) a pair of threads holds one point, half of each
// coordinate each, and both take the same item.
template<class bucket_t>
__device__ __forceinline__ static size_t item_index(size_t first_block = 0)
{   return (threadIdx.x + (blockIdx.x + first_block) * blockDim.x) / bucket_t::degree;   }

// One level of segment sums over |nrows| rows of 2^row_lg buckets, segments
// of 2^seg_lg: segment t of row r leaves w and p (above) at r·2^(row_lg -
// seg_lg) + t, with |step| in every row but the last, which has |top_step|.
// One thread per segment.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(256) __global__
void segment_sums(bucket_h* w, bucket_h* p, const bucket_h* v, uint32_t nrows,
                  uint32_t row_lg, uint32_t seg_lg, uint32_t step, uint32_t top_step)
{
    const size_t i = item_index<bucket_t>();
    if (i >= ((size_t)nrows << (row_lg - seg_lg)))
        return;
    const bool top = (i >> (row_lg - seg_lg)) == nrows - 1;
    const uint32_t mask = (1u << (top ? top_step : step)) - 1;
    const bucket_h* seg = v + (i << seg_lg);
    bucket_t from_j, sum;
    from_j.inf();
    sum.inf();
    for (uint32_t j = 1u << seg_lg; j-- > 0;) {
        bucket_t b = seg[j];
        from_j.add(b);
        if ((j & mask) == 0)
            sum.add(from_j);
    }
    w[i] = sum;
    p[i] = from_j;
}

// Sorted points per thread of accumulate_chunks, and its block: 384 threads
// of about 140 registers fill an SM's register file. On the H200 chunks of
// 128 points were as fast and 1024 slower.
constexpr uint32_t CHUNK_LG = 8;
constexpr uint32_t CHUNK = 1u << CHUNK_LG;
constexpr uint32_t CHUNK_THREADS = 384;

// The first bucket of row |h| (cumulative ends of |row| buckets; h[row - 1]
// > pos) that ends after |pos|: the bucket sorted position |pos| is in.
__device__ __forceinline__
static uint32_t bucket_of(const uint32_t* h, uint32_t row, uint32_t pos)
{
    uint32_t lo = 0, hi = row - 1;
    while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2;
        if (h[mid] > pos)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

// This thread's chunk: thread i adds run t = i % nchunks of window y = i /
// nchunks, the window's sorted positions [from, to) (none when from >= to;
// window 0's bucket 0, its ± ones, is batch_addition's); h is the window's
// histogram, of |row| buckets.
struct chunk_t {
    size_t i;
    uint32_t y, t, row, from = 0, to = 0;
    const uint32_t* h = nullptr;

    __device__ chunk_t(size_t item, uint32_t nwins, uint32_t nchunks,
                       vec2d_t<uint32_t> histogram, uint32_t row_lg)
        : i(item), y(i / nchunks), t(i % nchunks),
          row(1u << row_lg)
    {
        if (y >= nwins)
            return;
        h = &histogram[y][0];
        from = max(t << CHUNK_LG, y == 0 ? h[0] : 0);
        to = min((t + 1) << CHUNK_LG, h[row - 1]);
    }
    __device__ bool empty() const { return from >= to; }
    // Where bucket x begins.
    __device__ uint32_t start(uint32_t x) const { return x == 0 ? 0 : h[x - 1]; }
};

// Window |y|'s buckets from sort's digits and histogram (bucket x holds
// sorted positions [h[x - 1], h[x]) of the window, h[-1] = 0). Thread i adds
// the CHUNK points of its chunk_t whatever buckets they fall in, so every
// thread of a warp does the same number of additions. A run that starts its
// bucket goes to the bucket; the chunk's first run, when its bucket began in
// an earlier chunk, goes to carries[i] (add_carries adds it in). Empty
// buckets keep what they held: zero, the point at infinity.
template<class bucket_t, class affine_h, class bucket_h = typename bucket_t::mem_t,
         class affine_t = typename bucket_t::affine_t>
__launch_bounds__(CHUNK_THREADS) __global__
void accumulate_chunks(bucket_h* buckets, bucket_h* carries, const affine_h* points,
                       vec2d_t<uint32_t> digits, vec2d_t<uint32_t> histogram,
                       uint32_t nwins, uint32_t row_lg, uint32_t nchunks, size_t first_block)
{
    const chunk_t c{item_index<bucket_t>(first_block), nwins, nchunks, histogram, row_lg};
    if (c.empty())
        return;
    const uint32_t* h = c.h;
    const uint32_t* d = &digits[c.y][0];
    bucket_h* out = &buckets[(size_t)c.y << row_lg];
    uint32_t pos = c.from, x = bucket_of(h, c.row, pos), end = h[x];
    bool owner = c.start(x) == pos;
    bucket_t acc;
    acc.inf();
    for (; pos < c.to; pos++) {
        if (pos == end) {
            (owner ? out[x] : carries[c.i]) = acc;
            owner = true;
            while (h[++x] == pos)
                ;
            end = h[x];
            acc.inf();
        }
        const uint32_t digit = d[pos];
        const affine_t p = points[digit & 0x7fffffff];
        acc.add(p, digit >> 31);
    }
    (owner ? out[x] : carries[c.i]) = acc;
}

// The other half of accumulate_chunks: the thread of a chunk whose last run
// starts its bucket and goes on past the chunk adds the carries of the chunks
// the bucket covers.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(256) __global__
void add_carries(bucket_h* buckets, const bucket_h* carries, vec2d_t<uint32_t> histogram,
                 uint32_t nwins, uint32_t row_lg, uint32_t nchunks)
{
    const chunk_t c{item_index<bucket_t>(), nwins, nchunks, histogram, row_lg};
    if (c.empty())
        return;
    const uint32_t x = bucket_of(c.h, c.row, c.to - 1);
    if (c.start(x) < c.from || c.h[x] <= c.to)
        return;
    bucket_h& out = buckets[((size_t)c.y << row_lg) + x];
    bucket_t acc = out;
    for (uint32_t k = 1; k <= (c.h[x] - 1) / CHUNK - c.t; k++) {
        bucket_t carry = carries[c.i + k];
        acc.add(carry);
    }
    out = acc;
}

// A throughput lane's driver gives way to the critical stages on its device
// (gpu/turns.rs counts them in *critical): before each of its launches it
// waits for what it queued, so that at most one of its kernels is on the
// device when a critical stage begins (the express lane's blocks are
// dispatched first, but a kernel queued behind a long one takes the SMs
// back between the critical stage's kernels), then, while a critical stage
// runs, until |max_yield| is spent: the engine's SharingPolicy::max_yield, as
// long as a throughput step waits at most, so that a flood of critical stages
// slows partitions but never stops them. The express lane's (critical == nullptr)
// never waits.
class pace_t {
    const stream_t& s;
    const uint32_t* critical;
    std::chrono::steady_clock::duration left;
public:
    pace_t(const stream_t& s, const uint32_t* critical, uint64_t max_yield_us)
        : s(s), critical(critical),
          left(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::microseconds(max_yield_us))) {}
    bool yields() const { return critical != nullptr; }
    void operator()()
    {
        if (critical == nullptr)
            return;
        s.sync();
        const auto start = std::chrono::steady_clock::now();
        auto waited = std::chrono::steady_clock::duration::zero();
        while (__atomic_load_n(critical, __ATOMIC_SEQ_CST) != 0 && waited < left) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            waited = std::chrono::steady_clock::now() - start;
        }
        left -= std::min(waited, left);
    }
};

template<class point_t> static void times_pow2(point_t& x, uint32_t lg)
{
    for (uint32_t i = 0; i < lg; i++)
        x.dbl();
}

// a + 2^m_lg·(b - c) on the host.
template<class bucket_t, class point_t>
static point_t plus_scaled_difference(const point_t& a, point_t b, bucket_t c, uint32_t m_lg)
{
    c.cneg(true);
    b.add(point_t{c});
    times_pow2(b, m_lg);
    b.add(a);
    return b;
}

// Q of one window from the device's last level (2^LEVEL2_SEGMENTS_LG segments
// each of w2, p2 (from level 1's p) and pw (level 1's w, summed plainly)),
// |step| its buckets' step, l1 and l2 the levels' segment lengths (lg).
template<class bucket_t, class point_t>
static point_t window_sum(const bucket_t* w2, const bucket_t* p2, const bucket_t* pw,
                          uint32_t step, uint32_t l1, uint32_t l2)
{
    const uint32_t n = 1u << LEVEL2_SEGMENTS_LG;
    const uint32_t step1 = step > l1 ? step - l1 : 0;
    const uint32_t step2 = step1 > l2 ? step1 - l2 : 0;
    const uint32_t mask2 = step2 >= 32 ? ~0u : (1u << step2) - 1;
    bucket_t from_t, q2, sum_w2, sum_p2, sum_pw;
    from_t.inf(); q2.inf(); sum_w2.inf(); sum_p2.inf(); sum_pw.inf();
    for (uint32_t t = n; t-- > 0;) {
        from_t.add(p2[t]);
        if ((t & mask2) == 0)
            q2.add(from_t);             // Q(p2, step2), one suffix at a time
        sum_w2.add(w2[t]);
        sum_pw.add(pw[t]);
    }
    sum_p2 = from_t;
    const point_t q1 = plus_scaled_difference(point_t{sum_w2}, point_t{q2}, sum_p2,
                                              l2 > step1 ? l2 - step1 : 0);
    return plus_scaled_difference(point_t{sum_pw}, q1, sum_p2, l1 > step ? l1 - step : 0);
}

// Σ scalars[i]·points[i] for i < n, both on the device (the scalars in
// Montgomery form), with |wbits|-bit signed windows (WIDE_MIN_BITS to 26),
// on |gpu|'s stream 0; in batches of at most WIDE_BATCH_MAX points. On the
// throughput lane |critical| counts the device's critical stages (pace_t;
// accumulate_chunks then runs in launches of two waves), else it is null.
// Throws on CUDA errors.
template<class bucket_t, class point_t, class affine_t>
static void wide_msm(const gpu_t& gpu, point_t* out, const affine_t* points,
                     const scalar_t* scalars, size_t n, uint32_t wbits,
                     const uint32_t* critical, uint64_t max_yield_us)
{
    typedef typename bucket_t::mem_t bucket_h;
    typedef typename affine_t::mem_t affine_h;
#ifndef __CUDA_ARCH__     // on the device a G2 bucket_t is one thread's half of a point
    static_assert(sizeof(bucket_t) == sizeof(bucket_h), "buckets copied to the host as they lie");
#endif
    const size_t deg = bucket_t::degree;
    const stream_t& s = gpu[0];
    pace_t pace{s, critical, max_yield_us};
    const uint32_t nbits = scalar_t::bit_length();
    const uint32_t nwins = (nbits - 1) / wbits + 1;
    const uint32_t top = nbits - wbits * (nwins - 1);
    const size_t row = (size_t)1 << (wbits - 1);
    const size_t nones = (size_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
    const size_t stride = (std::min(n, WIDE_BATCH_MAX) + WARP_SZ - 1) & ~(size_t)(WARP_SZ - 1);

    dev_ptr_t<bucket_h> d_buckets{nwins * row + nones, s};
    dev_ptr_t<uint32_t> d_hist_mem{nwins * row, s};
    dev_ptr_t<uint32_t> d_digits_mem{nwins * stride, s};
    dev_ptr_t<uint2> d_temps_mem{2 * stride, s};
    const uint32_t nchunks = (uint32_t)((stride + CHUNK - 1) / CHUNK);
    dev_ptr_t<bucket_h> d_carries{(size_t)nwins * nchunks, s};
    vec2d_t<uint32_t> d_hist{&d_hist_mem[0], (uint32_t)row};
    vec2d_t<uint32_t> d_digits{&d_digits_mem[0], (uint32_t)stride};
    vec2d_t<uint2> d_temps{&d_temps_mem[0], (uint32_t)stride};
    bucket_h* d_ones = &d_buckets[nwins * row];
    // The reduction's levels: at most 2^LEVEL1_SEGMENTS_LG segments of at
    // least 16 buckets per window, then 2^LEVEL2_SEGMENTS_LG.
    const uint32_t row_lg = wbits - 1;
    const uint32_t l1 = std::max(row_lg > LEVEL1_SEGMENTS_LG ? row_lg - LEVEL1_SEGMENTS_LG : 0,
                                 std::min(4u, row_lg - LEVEL2_SEGMENTS_LG));
    const uint32_t l2 = row_lg - l1 - LEVEL2_SEGMENTS_LG;
    const size_t n1 = (size_t)nwins << (row_lg - l1), n2 = (size_t)nwins << LEVEL2_SEGMENTS_LG;
    dev_ptr_t<bucket_h> d_w1{n1, s}, d_p1{n1, s};
    // w2, p2, level 1's w summed, and a scratch for the last one's w.
    dev_ptr_t<bucket_h> d_last{4 * n2, s};

    // sppark's own launch shapes for breakdown and sort: a power of two of
    // about a third of the SMs.
    uint32_t grid = gpu.sm_count() / 3;
    while (grid & (grid - 1))
        grid &= grid - 1;
    const size_t sort_shared = sizeof(uint32_t) << DIGIT_BITS;
    // accumulate_chunks's blocks (one per SM fills its registers), in one
    // launch or, when yielding, in launches of two waves.
    const size_t chunk_blocks = (deg * nchunks * nwins + CHUNK_THREADS - 1) / CHUNK_THREADS;
    const size_t chunk_launch = pace.yields() ? 2 * (size_t)gpu.sm_count() : chunk_blocks;

    pinned_t last_mem{3 * n2 * sizeof(bucket_t)}, ones_mem{nones * sizeof(bucket_t)};
    bucket_t* last = last_mem.as<bucket_t>();
    bucket_t* ones = ones_mem.as<bucket_t>();
    std::vector<point_t> sums(nwins);
    out->inf();
    // On a throw, the copies queued into host memory finish before it is freed.
    try {
        for (size_t at = 0; at < n; at += stride) {
            const size_t len = std::min(stride, n - at);
            pace();
            breakdown<<<2 * grid, 1024, sizeof(scalar_t) * 1024, s>>>(
                d_digits, &scalars[at], len, nwins, wbits, true);
            CUDA_OK(cudaGetLastError());
            // Windows sorted two at a time; the top one has |top| bits.
            for (uint32_t win = 0; win < nwins; win += 2) {
                const uint32_t lsbits0 = (win == nwins - 1 ? top : wbits) - 1;
                const uint32_t lsbits1 = (win + 1 == nwins - 1 ? top : wbits) - 1;
                const uint32_t pair = win + 1 < nwins ? 2 : 1;
                pace();
                s.launch_coop(sort, dim3(grid, pair), dim3(SORT_BLOCKDIM), sort_shared,
                              d_digits, len, win, d_temps, d_hist, wbits - 1, lsbits0, lsbits1);
            }
            const affine_h* p = reinterpret_cast<const affine_h*>(&points[at]);
            // Window 0's bucket 0 (its ± ones), left empty by accumulate_chunks.
            pace();
            batch_addition<bucket_t><<<gpu.sm_count(), BATCH_ADD_BLOCK_SIZE, 0, s>>>(
                d_ones, p, len, &d_digits[0][0], d_hist[0][0]);
            CUDA_OK(cudaGetLastError());
            CUDA_OK(cudaMemsetAsync(&d_buckets[0], 0, nwins * row * sizeof(bucket_h), s));
            for (size_t first = 0; first < chunk_blocks; first += chunk_launch) {
                pace();
                accumulate_chunks<bucket_t, affine_h>
                    <<<std::min(chunk_launch, chunk_blocks - first), CHUNK_THREADS, 0, s>>>(
                        &d_buckets[0], &d_carries[0], p, d_digits, d_hist, nwins, row_lg,
                        nchunks, first);
                CUDA_OK(cudaGetLastError());
            }
            // The rest are short: one step.
            pace();
            add_carries<bucket_t><<<blocks_for(deg * nchunks * nwins), 256, 0, s>>>(
                &d_buckets[0], &d_carries[0], d_hist, nwins, row_lg, nchunks);
            CUDA_OK(cudaGetLastError());
            const uint32_t top_step = wbits - top;
            segment_sums<bucket_t><<<blocks_for(deg * nwins << (row_lg - l1)), 256, 0, s>>>(
                &d_w1[0], &d_p1[0], &d_buckets[0], nwins, row_lg, l1, 0u, top_step);
            segment_sums<bucket_t><<<blocks_for(deg * nwins << LEVEL2_SEGMENTS_LG), 256, 0, s>>>(
                &d_last[0], &d_last[n2], &d_p1[0], nwins, row_lg - l1, l2, 0u,
                top_step > l1 ? top_step - l1 : 0u);
            segment_sums<bucket_t><<<blocks_for(deg * nwins << LEVEL2_SEGMENTS_LG), 256, 0, s>>>(
                &d_last[3 * n2], &d_last[2 * n2], &d_w1[0], nwins, row_lg - l1, l2, PLAIN, PLAIN);
            CUDA_OK(cudaGetLastError());
            s.DtoH(last, &d_last[0], 3 * n2);
            s.DtoH(ones, d_ones, nones);
            s.sync();

            gpu.par_map(nwins, 1, [&](size_t y) {
                const size_t first = y << LEVEL2_SEGMENTS_LG;
                sums[y] = window_sum<bucket_t, point_t>(&last[first], &last[n2 + first],
                                                        &last[2 * n2 + first],
                                                        y == nwins - 1 ? top_step : 0, l1, l2);
            });
            point_t batch = sums[nwins - 1];
            for (uint32_t y = nwins - 1; y-- > 0;) {
                times_pow2(batch, wbits);
                batch.add(sums[y]);
            }
            batch.add(point_t{sum_up(ones, nones)});
            out->add(batch);
        }
    } catch (...) {
        (void)cudaStreamSynchronize(s);
        throw;
    }
}

#endif
