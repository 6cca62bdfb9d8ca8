/// A bounded, thread-safe map that forgets its least recently used entries first.
///
/// The keys are spread over independently locked shards, so concurrent evaluations rarely wait for
/// each other and never for one global lock. Each shard holds at most its share of the capacity
/// and evicts its own least recently used entry when full.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private final class Shard: Sendable {
        let storage: Locked<LRUStorage<Key, Value>>
        init(capacity: Int) { storage = Locked(LRUStorage(capacity: capacity)) }
    }

    private let shards: [Shard]
    /// The most entries the cache holds.
    let capacity: Int

    /// - Parameter capacity: The most entries held (at least 1); split evenly over the shards.
    init(capacity: Int) {
        let capacity = max(1, capacity)
        let count = min(16, capacity)
        let each = (capacity + count - 1) / count
        self.capacity = each * count
        self.shards = (0..<count).map { _ in Shard(capacity: each) }
    }

    private func shard(for key: Key) -> Shard {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// The value stored for `key`, marking it as the most recently used.
    func value(for key: Key) -> Value? {
        shard(for: key).storage.withLock { $0.value(for: key) }
    }

    /// Stores `value` for `key`, replacing any previous value and evicting the least recently used
    /// entry of the key's shard when it is full.
    func insert(_ value: Value, for key: Key) {
        shard(for: key).storage.withLock { $0.insert(value, for: key) }
    }

    func removeValue(for key: Key) {
        shard(for: key).storage.withLock { $0.removeValue(for: key) }
    }

    func removeAll() {
        for shard in shards { shard.storage.withLock { $0.removeAll() } }
    }

    /// The number of entries held.
    var count: Int {
        shards.reduce(0) { total, shard in total + shard.storage.withLock { $0.count } }
    }
}

/// A least-recently-used map: a dictionary into a doubly linked list kept in an array, so a hit
/// moves an entry to the front without allocating.
struct LRUStorage<Key: Hashable, Value> {
    private struct Node {
        var key: Key
        /// Nil once removed, so a free node keeps nothing alive.
        var value: Value?
        var newer: Int
        var older: Int
    }

    private let capacity: Int
    private var index: [Key: Int] = [:]
    private var nodes: [Node] = []
    private var free: [Int] = []
    /// The most and least recently used nodes; -1 when empty.
    private var newest = -1
    private var oldest = -1

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        index.reserveCapacity(self.capacity)
    }

    var count: Int { index.count }

    mutating func value(for key: Key) -> Value? {
        guard let position = index[key] else { return nil }
        moveToFront(position)
        return nodes[position].value
    }

    mutating func insert(_ value: Value, for key: Key) {
        if let position = index[key] {
            nodes[position].value = value
            moveToFront(position)
            return
        }
        if index.count >= capacity { removeValue(for: nodes[oldest].key) }
        let node = Node(key: key, value: value, newer: -1, older: newest)
        let position: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            position = reused
        } else {
            nodes.append(node)
            position = nodes.count - 1
        }
        if newest >= 0 { nodes[newest].newer = position }
        newest = position
        if oldest < 0 { oldest = position }
        index[key] = position
    }

    mutating func removeValue(for key: Key) {
        guard let position = index.removeValue(forKey: key) else { return }
        unlink(position)
        nodes[position].value = nil
        free.append(position)
    }

    /// Removes the least recently used entry and returns its key; nil when empty.
    @discardableResult
    mutating func removeOldest() -> Key? {
        guard oldest >= 0 else { return nil }
        let key = nodes[oldest].key
        removeValue(for: key)
        return key
    }

    mutating func removeAll() {
        index.removeAll()
        nodes.removeAll()
        free.removeAll()
        newest = -1
        oldest = -1
    }

    private mutating func unlink(_ position: Int) {
        let node = nodes[position]
        if node.newer >= 0 { nodes[node.newer].older = node.older } else { newest = node.older }
        if node.older >= 0 { nodes[node.older].newer = node.newer } else { oldest = node.newer }
        nodes[position].newer = -1
        nodes[position].older = -1
    }

    private mutating func moveToFront(_ position: Int) {
        guard position != newest else { return }
        unlink(position)
        nodes[position].older = newest
        if newest >= 0 { nodes[newest].newer = position }
        newest = position
        if oldest < 0 { oldest = position }
    }
}

/// An LRU store whose entries each have a cost (bytes, say): the least recently used go while the
/// costs add up to more than the budget, or the entries to more than the capacity. An entry whose
/// cost alone exceeds the budget is not kept.
struct CostBoundedLRU<Key: Hashable, Value> {
    private var storage: LRUStorage<Key, Value>
    private var costs: [Key: Int] = [:]
    private let capacity: Int
    let budget: Int
    /// What the entries kept cost together.
    private(set) var cost = 0

    init(capacity: Int, budget: Int) {
        self.capacity = max(1, capacity)
        self.budget = budget
        storage = LRUStorage(capacity: self.capacity)
    }

    var count: Int { storage.count }

    mutating func value(for key: Key) -> Value? { storage.value(for: key) }

    mutating func insert(_ value: Value, for key: Key, cost itemCost: Int) {
        removeValue(for: key)
        guard itemCost <= budget else { return }
        while storage.count >= capacity || (cost + itemCost > budget && storage.count > 0) {
            guard let evicted = storage.removeOldest() else { break }
            cost -= costs.removeValue(forKey: evicted) ?? 0
        }
        storage.insert(value, for: key)
        costs[key] = itemCost
        cost += itemCost
    }

    mutating func removeValue(for key: Key) {
        guard let old = costs.removeValue(forKey: key) else { return }
        storage.removeValue(for: key)
        cost -= old
    }
}
