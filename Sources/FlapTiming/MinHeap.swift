import FlapClock
/// A binary min-heap of timed flips, earliest instant first.
struct MinHeap {
    private(set) var items: [TimedFlip] = []

    var first: TimedFlip? { items.first }
    var count: Int { items.count }

    mutating func push(_ e: TimedFlip) {
        items.append(e)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].instant < items[parent].instant else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func popFirst() {
        let last = items.removeLast()
        guard !items.isEmpty else { return }
        items[0] = last
        siftDown(0)
    }

    /// Removes the entries for which `drop` returns true (it may edit the others), then
    /// restores the heap order.
    mutating func removeAll(where drop: (inout TimedFlip) -> Bool) {
        var kept: [TimedFlip] = []
        kept.reserveCapacity(items.count)
        for var e in items where !drop(&e) { kept.append(e) }
        items = kept
        for i in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < items.count, items[l].instant < items[smallest].instant { smallest = l }
            if r < items.count, items[r].instant < items[smallest].instant { smallest = r }
            if smallest == i { return }
            items.swapAt(i, smallest)
            i = smallest
        }
    }
}
