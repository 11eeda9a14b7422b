/**
 * InitProducerId (key 22), v0–4. Without a transactional id (idempotent producers): always a new
 * producer id with epoch 0, whatever ProducerId/ProducerEpoch the request names — what a Kafka
 * broker does without a transactional id (@platformatic/kafka sends 0/0, librdkafka -1/-1, and
 * after a sequence error a client asks again and starts over at sequence 0). The partitions
 * check the sequences (shards/worker/append-checks.ts). With a transactional id the transaction
 * coordinator (txn/) answers the id's producer id and a new epoch, fencing older ones.
 */
import {
  type InitProducerIdRequest,
  type InitProducerIdResponse,
  INIT_PRODUCER_ID,
  decodeInitProducerIdRequest,
  encodeInitProducerIdResponse,
} from '../messages/init-producer-id';
import { type ApiHandler } from '../handler';
import { KafkaError, kafkaErrorOf } from '../error-codes';
import { accessOf, kafkaDenial } from '../auth';

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
    if (req.transactionalId !== null) {
      const r = await ctx.txns.initProducerId(req.transactionalId, req.transactionTimeoutMs);
      return answer(r.errorCode, r.producerId, r.producerEpoch);
    }
    try {
      return answer(0, await ctx.txns.ids.next(), 0);
    } catch (err) {
      // A new block of ids could not be taken (the metadata store is away): retriable.
      return answer(kafkaErrorOf(err));
    }
  },
};
