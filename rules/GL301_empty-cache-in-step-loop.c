/* GL301 empty-cache-in-step-loop: `torch.cuda.empty_cache()` in code that runs every step.
 *
 * ## What it does
 * Flags `torch.cuda.empty_cache()` inside a training or evaluation step loop, inside a loop of a
 * Module's `forward`, or in a function the same file calls from a step loop. With the files linted
 * together, also in a function, or the `__call__` of a class (a loss object a trainer holds:
 * `self.compute_loss(preds, targets)`), that another file calls once per training step. A call under a test
 * that picks one iteration (`if step == 0:`, an error path) is left alone, except where the test
 * picks one micro-batch of an accumulation loop that the optimizer steps after (`for i, s in
 * enumerate(samples): if i == 1: ...`): that runs once per step.
 *
 * ## Why is this bad?
 * `empty_cache()` returns the caching allocator's free blocks to the driver. It cannot free
 * memory that tensors still hold, so it never lowers peak memory or fixes a leak; it only makes
 * the next allocations slow (cudaMalloc again) and synchronizes the device. Once per step it
 * costs throughput for nothing. Once per epoch, or after training, is fine.
 *
 * ## Example
 * ```python
 * for x, y in loader:
 *     loss = criterion(model(x), y)
 *     loss.backward()
 *     optimizer.step()
 *     torch.cuda.empty_cache()
 * ```
 *
 * Use instead:
 * ```python
 * for x, y in loader:
 *     loss = criterion(model(x), y)
 *     loss.backward()
 *     optimizer.step()
 * torch.cuda.empty_cache()  # once, if another process needs the memory
 * ```
 *
 * ## Fix safety
 * The fix deletes the call (or puts `pass` in its place when it is the only statement of its
 * block). It is unsafe: the memory it released was visible to other processes on the same GPU
 * (and to `nvidia-smi`), and code may rely on that; move the call after the loop by hand if it is
 * needed once.
 *
 * ## References
 * - https://pytorch.org/docs/stable/notes/cuda.html#memory-management
 * - https://pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html
 */
#include "rules/rule.h"

void rule_GL301(RuleCtx *c)
{
    static const PerStepText text = {
        "torch.cuda.empty_cache()",
        "it synchronizes and slows each step and cannot lower peak memory",
        false,
        "; it synchronizes and slows each step and cannot lower peak memory",
        "Remove it, or call it once per epoch or after training",
    };
    rule_report_per_step_calls(c, "torch.cuda.empty_cache", &text);
}
