// Drives @platformatic/kafka 1.35, or 2.12 on a newer Node.js (`package`, platformatic-process.ts),
// an ES module which jest's CommonJS runtime cannot load, in a child process for the tests that
// use it (test/kafka/*platformatic*.test.ts, test/cluster/consumer-group-failover.test.ts). Takes one JSON argument and writes
// one JSON object per line on stdout:
//   {op:'consume', broker, group, topics, mode, fallbackMode?, offsets?, max?, groupProtocol?, assignor?, retries?}
//       → {type:'join', memberId, generationId, assignments}, {type:'message', topic, partition, offset, value}…
//         groupProtocol 'consumer' (KIP-848, server-side assignor `assignor`): also
//         {type:'assignment', memberId, assignments} each time the assignment changes
//         each message is committed (OffsetCommit) before it is reported; after `max` messages, or
//         on SIGTERM, the consumer closes (LeaveGroup) and prints {type:'closed'}
//   {op:'admin', broker, action:'describe'|'list'|'delete'|'offsets'|'offsetsForTime'|'apis', groups?, topic?, timestamp?, types?, states?}
//       ('list': ListGroups v5 with the `types` and `states` filters when given, the client's default types otherwise)
//       ('apis': create with retention.ms, describe and incrementally alter configs, add a partition, delete records)
//       → {type:'result', value}
//   {op:'admin', broker, action:'configs', steps:[{describe|alter|incremental: options}…]}
//       runs describeConfigs / alterConfigs / incrementalAlterConfigs with the options as given, in order
//       → {type:'result', value:[{value} | {error:{apiId, code, message}}…]} (the first Kafka error of a failed step)
const o = JSON.parse(process.argv[2]);
// `package`: the @platformatic/kafka to drive (test/kafka/platformatic-process.ts, PltRuntime).
const { Admin, Consumer, stringDeserializers } = await import(o.package ?? '@platformatic/kafka');
const print = (v) => process.stdout.write(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x instanceof Map ? Object.fromEntries(x) : x)) + '\n');
// `retries`: how long a call keeps trying (× 200 ms); a cluster test raises it to outlast a failover.
const base = { clientId: 'svc-plt', bootstrapBrokers: [o.broker], retries: o.retries ?? 3, retryDelay: 200 };

/** Whether a commit failed only because the member's epoch moved on (the error, or every error an AggregateError holds, at any depth). */
function staleEpoch(err) {
  if (err?.apiId === 'STALE_MEMBER_EPOCH') return true;
  return Array.isArray(err?.errors) && err.errors.length > 0 && err.errors.every(staleEpoch);
}

async function consume() {
  const protocol = o.groupProtocol === undefined ? {} : { groupProtocol: o.groupProtocol, groupRemoteAssignor: o.assignor };
  const consumer = new Consumer({ ...base, ...protocol, groupId: o.group, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTime: 200, deserializers: stringDeserializers });
  consumer.on('consumer:group:join', (p) => print({ type: 'join', memberId: p.memberId, generationId: p.generationId, assignments: p.assignments }));
  if (o.groupProtocol === 'consumer') {
    // The consumer protocol changes assignments between heartbeats, with no join event: watch them.
    let last = '[]';
    setInterval(() => {
      const now = JSON.stringify((consumer.assignments ?? []).map((a) => ({ topic: a.topic, partitions: [...a.partitions].sort((x, y) => x - y) })));
      if (now !== last) print({ type: 'assignment', memberId: consumer.memberId, assignments: JSON.parse(now) });
      last = now;
    }, 20).unref();
  }
  const stream = await consumer.consume({ topics: o.topics, mode: o.mode, fallbackMode: o.fallbackMode, offsets: o.offsets?.map((x) => ({ ...x, offset: BigInt(x.offset) })), autocommit: false });
  let closing = null;
  const close = () => {
    closing ??= (async () => {
      await stream.close();
      await consumer.close();
      print({ type: 'closed' });
      process.exit(0);
    })();
    return closing;
  };
  process.on('SIGTERM', () => void close());
  let n = 0;
  for await (const m of stream) {
    try {
      await m.commit();
    } catch (err) {
      // A record fetched before a rebalance moved its partition away: the commit carries the old
      // member epoch and Kafka refuses it (STALE_MEMBER_EPOCH). An application logs that and goes
      // on; the partition's new owner reads the record again from the last committed offset.
      if (!staleEpoch(err)) throw err;
      print({ type: 'commit-failed', topic: m.topic, partition: m.partition, offset: m.offset });
    }
    print({ type: 'message', topic: m.topic, partition: m.partition, offset: m.offset, value: m.value });
    if (o.max !== undefined && ++n >= o.max) break;
  }
  await close();
}

/** The first Kafka error (an apiId) in an error or its nested errors, or the error's message. */
function kafkaError(err) {
  const found = [];
  const walk = (e, depth) => {
    if (e === null || typeof e !== 'object' || depth > 6) return;
    if (typeof e.apiId === 'string') found.push({ apiId: e.apiId, code: e.apiCode ?? e.code, message: e.serverErrorMessage ?? e.message });
    for (const x of e.errors ?? []) walk(x, depth + 1);
    walk(e.cause, depth + 1);
  };
  walk(err, 0);
  return found[0] ?? { apiId: null, code: null, message: String(err?.message ?? err) };
}

async function admin() {
  if (o.action === 'offsetsForTime') {
    const consumer = new Consumer({ ...base, groupId: 'svc-plt-offsets' });
    print({ type: 'result', value: await consumer.listOffsets({ topics: [o.topic], timestamp: BigInt(o.timestamp) }) });
    await consumer.close();
    return;
  }
  const a = new Admin(base);
  let value;
  if (o.action === 'describe') value = await a.describeGroups({ groups: o.groups });
  else if (o.action === 'list') value = await a.listGroups({ ...(o.types === undefined ? {} : { types: o.types }), ...(o.states === undefined ? {} : { states: o.states }) });
  else if (o.action === 'delete') value = await a.deleteGroups({ groups: o.groups });
  else if (o.action === 'configs') {
    value = [];
    for (const step of o.steps) {
      try {
        if (step.describe !== undefined) value.push({ value: await a.describeConfigs(step.describe) });
        else if (step.alter !== undefined) value.push({ value: await a.alterConfigs(step.alter) ?? null });
        else value.push({ value: await a.incrementalAlterConfigs(step.incremental) ?? null });
      } catch (err) {
        value.push({ error: kafkaError(err) });
      }
    }
  }
  else if (o.action === 'apis') {
    const t = o.topic;
    await a.createTopics({ topics: [t], partitions: 1, replicas: 1, configs: [{ name: 'retention.ms', value: '120000' }] });
    const before = await a.describeConfigs({ resources: [{ resourceType: 2, resourceName: t }] });
    await a.incrementalAlterConfigs({ resources: [{ resourceType: 2, resourceName: t, configs: [{ name: 'retention.ms', configOperation: 0, value: '240000' }] }] });
    const after = await a.describeConfigs({ resources: [{ resourceType: 2, resourceName: t, configurationKeys: ['retention.ms'] }] });
    await a.createPartitions({ topics: [{ name: t, count: 2 }] });
    const deleted = await a.deleteRecords({ topics: [{ name: t, partitions: [{ partition: 0, offset: -1n }] }] });
    const configs = (d) => Object.fromEntries(d[0].configs.map((c) => [c.name, c.value]));
    value = { before: configs(before), after: configs(after), deleted };
  }
  else value = await a.listConsumerGroupOffsets({ groups: o.groups });
  print({ type: 'result', value });
  await a.close();
}

(o.op === 'consume' ? consume() : admin()).catch((err) => {
  process.stderr.write(`${err.stack}\n${JSON.stringify(err.errors ?? err.cause ?? null)}\n`);
  process.exit(1);
});
