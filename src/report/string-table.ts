/** Each distinct string stored once; records refer to it by index. */
export class StringTable {
  readonly values: string[] = [];
  private readonly indexByValue = new Map<string, number>();

  add(value: string): number {
    let index = this.indexByValue.get(value);
    if (index === undefined) {
      index = this.values.length;
      this.values.push(value);
      this.indexByValue.set(value, index);
    }
    return index;
  }

  /** -1 for a missing value, so columns stay plain number arrays. */
  addOptional(value: string | undefined | null): number {
    return typeof value === 'string' ? this.add(value) : -1;
  }
}

/** Tag lists stored once each (criteria of a benchmark share a handful of tag combinations). */
export class TagSetTable {
  readonly sets: number[][] = [];
  private readonly indexByKey = new Map<string, number>();

  constructor(private readonly strings: StringTable) {}

  add(tags: readonly string[] | undefined): number {
    if (!tags || tags.length === 0) return -1;
    const references = tags.map((tag) => this.strings.add(tag));
    const key = references.join(',');
    let index = this.indexByKey.get(key);
    if (index === undefined) {
      index = this.sets.length;
      this.sets.push(references);
      this.indexByKey.set(key, index);
    }
    return index;
  }
}
