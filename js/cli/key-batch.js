// Feeding keys to a filter while the input is read. Keys arrive as views into
// the current input chunk (valid only during the call).
export class KeyBatch {
  /**
   * @param filter a BloomFilter
   * @param {'item'|'key'} mode 'item': apply the filter's key encoding (add);
   *   'key': the bytes are the stored key already (addKey, e.g. decoded SHA-1)
   */
  constructor(filter, mode) {
    this.filter = filter;
    this.push = mode === 'key' ? (key) => filter.addKey(key) : (item) => filter.add(item);
    this.flush = () => {};
  }
}
