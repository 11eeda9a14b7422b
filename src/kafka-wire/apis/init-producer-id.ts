/**
 * InitProducerId (key 22), v0–4, for idempotent producers (no transactions): a new producer id
 * with epoch 0; from v3 a producer that names its current id and epoch (KIP-360, after an
 * UNKNOWN_PRODUCER_ID or a sequence error) keeps its id with the next epoch, which restarts its
 * sequences at 0 on every partition. The partitions check the sequences (shards/worker/shard.ts);
 * no producer state lives here. A transactional id is refused: transactions are not served.
 */
import {
  type InitProducerIdRequest,
  type InitProducerIdResponse,
  INIT_PRODUCER_ID,
  decodeInitProducerIdRequest,
  encodeInitProducerIdResponse,
} from '../messages/init-producer-id';
import { type ApiHandler } from '../handler';
import { KafkaError } from '../error-codes';
import { accessOf, kafkaDenial } from '../auth';
import { ProducerIds } from '../producer-ids';

/** Kafka's producerEpoch is an int16. */
const MAX_EPOCH = 32767;

const ids = new ProducerIds();

function answer(errorCode: number, producerId = -1n, producerEpoch = -1): InitProducerIdResponse {
  return { throttleTimeMs: 0, errorCode, producerId, producerEpoch };
}

export const INIT_PRODUCER_ID_HANDLER: ApiHandler<InitProducerIdRequest, InitProducerIdResponse> = {
  api: INIT_PRODUCER_ID,
  decode: decodeInitProducerIdRequest,
  encode: encodeInitProducerIdResponse,
  async handle(ctx, req, _version, conn) {
    // An idempotent producer writes: the token must allow appends (to some stream).
    if (kafkaDenial(accessOf(conn, ctx.authenticate !== null), 'append') !== null) return answer(KafkaError.CLUSTER_AUTHORIZATION_FAILED);
    if (req.transactionalId !== null) return answer(KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const id = req.producerId ?? -1n;
    const epoch = req.producerEpoch ?? -1;
    if (id >= 0n && epoch >= 0 && epoch < MAX_EPOCH) return answer(0, id, epoch + 1);
    return answer(0, ids.next(), 0);
  },
};
