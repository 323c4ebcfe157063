/**
 * What the composition root started, in the order it started it: close() stops everything in reverse,
 * so a resource is closed before what it uses. A failure part-way through start-up closes what had
 * started by then, and nothing started is left behind to keep the process alive.
 */
export class Lifecycle {
  private readonly started: { name: string; close: () => Promise<void> | void }[] = [];
  private closing: Promise<void> | undefined;

  /** Registers a resource as soon as it exists; returns it, so creation and registration read as one. */
  add<T>(name: string, resource: T, close: (resource: T) => Promise<void> | void): T {
    this.started.push({ name, close: () => close(resource) });
    return resource;
  }

  /** Closes in reverse order of start; every close runs even when an earlier one failed. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    const failures: { name: string; error: unknown }[] = [];
    for (const { name, close } of this.started.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        failures.push({ name, error });
      }
    }
    // The first failure is the one to explain; the later ones were closed past it.
    const first = failures[0];
    if (first !== undefined) throw first.error;
  }
}
