"""PyTorch baseline of `bench compute --device gpu` (bench/compute-gpu.ts): the same model, loss,
optimiser and generation on the same GPU, timed by the same protocol.

Usage: python3 bench/pytorch_compute.py PROBLEM.json  (written by compute-gpu.ts: weights, targets
and the first batch as raw float32 files beside it); writes result.json in the same folder.

Model (src/model/generator.ts): h0 = relu(z W_in + b_in); h_{l+1} = h_l + relu(LN(h_l) W_l + b_l);
logits = h_L W_out + b_out; p = softmax per feature. Loss (src/model/loss.ts): KL(given || model)
over the 1-way and the given 2-way marginals, the 2-way sums read from the Gram matrix P^T P (the
dense mode of the CUDA core). Adam (torch.optim.Adam, fused, eps 1e-8). Eager PyTorch, FP32
(TF32 off for matmuls), autograd for the backward pass.

Timed as the CUDA core is: a training step takes latents from host memory (8 pre-drawn batches in
rotation), runs forward, loss, backward and Adam, and reads the loss back (.item()); the median of
block means after warm-up. Generation: latents (float32) and uniforms (float64) from host memory,
forward, per-feature softmax in float64, inverse CDF (first code whose running sum exceeds u * total,
as src/model/sampling.ts), codes (int32, F x n) back to host memory; best of 3. Also timed for
reference: the training step with latents drawn on the GPU (torch.randn), which skips the copy.
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def main() -> None:
    problem_path = sys.argv[1]
    with open(problem_path) as fh:
        pb = json.load(fh)
    d = pb["dir"]
    dev = torch.device("cuda")
    E, H, L = pb["E"], pb["H"], pb["L"]
    card = pb["cardinalities"]
    off = np.concatenate([[0], np.cumsum(card)]).astype(np.int64)
    D = int(off[-1])
    F = len(card)
    w = np.fromfile(os.path.join(d, "weights.f32"), dtype=np.float32)
    q1 = torch.from_numpy(np.fromfile(os.path.join(d, "q1.f32"), dtype=np.float32)).to(dev)
    qp = torch.from_numpy(np.fromfile(os.path.join(d, "qp.f32"), dtype=np.float32)).to(dev)
    z0 = torch.from_numpy(np.fromfile(os.path.join(d, "z0.f32"), dtype=np.float32).reshape(-1, E))

    # Pair entries: their flat index into the D x D Gram matrix.
    gidx = []
    for b in pb["blocks"]:
        f, c0, c1 = b["f"], b["c0"], b["c1"]
        rows = np.arange(off[f], off[f + 1])[:, None]
        cols = np.arange(c0, c1)[None, :]
        gidx.append((rows * D + cols).reshape(-1))
    gidx = torch.from_numpy(np.concatenate(gidx)).to(dev)
    count, neg_entropy = pb["count"], pb["neg_entropy"]

    # Parameters in the flat order of generator.ts paramShapes.
    at = 0

    def take(*shape):
        nonlocal at
        size = int(np.prod(shape))
        t = torch.from_numpy(w[at : at + size].reshape(shape).copy()).to(dev).requires_grad_(True)
        at += size
        return t

    W_in, b_in = take(E, H), take(H)
    blocks = []
    for _ in range(L):
        blocks.append((take(H), take(H), take(H, H), take(H)))
    W_out, b_out = take(H, D), take(D)
    assert at == w.size, (at, w.size)
    params = [W_in, b_in] + [p for blk in blocks for p in blk] + [W_out, b_out]
    slices = [(int(off[f]), int(off[f + 1])) for f in range(F)]

    def logits_of(z):
        h = torch.relu(z @ W_in + b_in)
        for g, beta, W, b in blocks:
            u = torch.nn.functional.layer_norm(h, (H,), g, beta, 1e-5)
            h = h + torch.relu(u @ W + b)
        return h @ W_out + b_out

    def loss_of(z):
        lg = logits_of(z)
        p = torch.cat([torch.softmax(lg[:, a:b], dim=1) for a, b in slices], dim=1)
        n = z.shape[0]
        s1 = p.sum(0)
        gram = (p.t() @ p).reshape(-1)
        cross = (q1 * torch.log(s1 / n + 1e-10)).sum() + (qp * torch.log(gram[gidx] / n + 1e-10)).sum()
        return (neg_entropy - cross) / count

    with torch.no_grad():
        first_loss = loss_of(z0.to(dev)).item()

    opt = torch.optim.Adam(params, lr=1e-4, eps=1e-8, fused=True)

    def train(n, warmup, nblocks, per_block, on_device=False):
        pool = [torch.randn(n, E, generator=torch.Generator().manual_seed(i)) for i in range(8)]
        s = 0

        def step():
            nonlocal s
            z = torch.randn(n, E, device=dev) if on_device else pool[s % 8].to(dev)
            s += 1
            opt.zero_grad(set_to_none=True)
            loss = loss_of(z)
            loss.backward()
            opt.step()
            return loss.item()

        for _ in range(warmup):
            step()
        torch.cuda.synchronize()
        means = []
        for _ in range(nblocks):
            t0 = time.perf_counter()
            for _ in range(per_block):
                step()
            torch.cuda.synchronize()
            means.append((time.perf_counter() - t0) * 1000 / per_block)
        return statistics.median(means), means

    t256, b256 = train(256, 30, 10, 50)
    t8192, b8192 = train(8192, 10, 5, 20)
    t256d, _ = train(256, 10, 5, 50, on_device=True)
    t8192d, _ = train(8192, 5, 5, 20, on_device=True)

    # Generation.
    n = pb["rows"]
    rng = np.random.default_rng(1)
    zh = torch.from_numpy((rng.random((n, E), dtype=np.float32) * 4 - 2))
    uh = torch.from_numpy(rng.random((n, F)))

    @torch.no_grad()
    def generate():
        z = zh.to(dev)
        u = uh.to(dev)
        lg = logits_of(z)
        codes = torch.empty((F, n), dtype=torch.int32, device=dev)
        for f, (a, b) in enumerate(slices):
            x = lg[:, a:b].double()
            e = torch.exp(x - x.max(dim=1, keepdim=True).values)
            cdf = torch.cumsum(e, dim=1)
            target = u[:, f : f + 1] * cdf[:, -1:]
            k = torch.searchsorted(cdf, target, right=True)
            codes[f] = torch.clamp(k, max=b - a - 1).squeeze(1).to(torch.int32)
        return codes.cpu()

    generate()
    torch.cuda.synchronize()
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        c = generate()
        runs.append(n / (time.perf_counter() - t0))
        assert c.shape == (F, n)

    out = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "first_loss": first_loss,
        "train_ms_b256": t256,
        "train_ms_b256_blocks": b256,
        "train_ms_b8192": t8192,
        "train_ms_b8192_blocks": b8192,
        "train_ms_b256_device_latents": t256d,
        "train_ms_b8192_device_latents": t8192d,
        "generate_rows_per_s": max(runs),
        "generate_runs_rows_per_s": runs,
    }
    with open(os.path.join(d, "result.json"), "w") as fh:
        json.dump(out, fh)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
