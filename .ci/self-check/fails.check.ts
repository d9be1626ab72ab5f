import { expect, test } from 'vitest';

// Run only by .ci/run's self-check (PIGEON_TEST_SELF_CHECK=1): this test must fail, and the test
// command must then exit non-zero. If it ever exits 0, a failing suite could pass CI.
test('fails on purpose', () => {
  expect(1 + 1).toBe(3);
});
