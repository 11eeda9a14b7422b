/** DeleteTopics (key 20), v1–6: deletes every partition stream of the topic; v6 may name topics by id. */
import {
  type DeletableTopicResult,
  type DeleteTopicsRequest,
  type DeleteTopicsResponse,
  DELETE_TOPICS,
  decodeDeleteTopicsRequest,
  encodeDeleteTopicsResponse,
} from '../messages/delete-topics';
import { ZERO_UUID } from '../protocol/uuid';
import { type ApiHandler } from '../handler';
import { KafkaError, kafkaErrorOf, messageOf } from '../error-codes';
import { deleteTopic } from '../topic-admin';
import { allowed } from '../auth';

export const DELETE_TOPICS_HANDLER: ApiHandler<DeleteTopicsRequest, DeleteTopicsResponse> = {
  api: DELETE_TOPICS,
  decode: decodeDeleteTopicsRequest,
  encode: encodeDeleteTopicsResponse,
  async handle(ctx, req, _version, conn) {
    const asked = req.topics ?? (req.topicNames ?? []).map((name) => ({ name, topicId: ZERO_UUID }));
    const responses: DeletableTopicResult[] = [];
    for (const q of asked) {
      const byId = q.name === null || q.name === '';
      const t = byId ? await ctx.topics.byId(q.topicId) : await ctx.topics.get(q.name!);
      if (t === undefined) {
        const errorCode = byId ? KafkaError.UNKNOWN_TOPIC_ID : KafkaError.UNKNOWN_TOPIC_OR_PARTITION;
        responses.push({ name: q.name, topicId: q.topicId, errorCode, errorMessage: 'no such topic' });
        continue;
      }
      if (!t.partitions.every((s) => s === undefined || allowed(ctx, conn, 'delete', s))) {
        responses.push({ name: t.name, topicId: t.id, errorCode: KafkaError.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'the token does not allow deleting this topic' });
        continue;
      }
      try {
        await deleteTopic(ctx, t);
        responses.push({ name: t.name, topicId: t.id, errorCode: 0, errorMessage: null });
      } catch (err) {
        responses.push({ name: t.name, topicId: t.id, errorCode: kafkaErrorOf(err), errorMessage: messageOf(err) });
      }
    }
    return { throttleTimeMs: 0, responses };
  },
};
