import type { TestApp } from './app';

/** A gauge or counter's value in an instance's metrics (0 when absent). */
export async function metric(t: TestApp, name: string, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await t.app.metrics.registry.getSingleMetric(name)!.get();
  const value = values.find((each) => Object.entries(labels).every(([label, wanted]) => each.labels[label] === wanted));
  return value?.value ?? 0;
}
