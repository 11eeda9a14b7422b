/** kafkajs-snappy 1.1.0 ships no types: a kafkajs codec factory (kafkajs' CompressionCodecs entry). */
declare module 'kafkajs-snappy' {
  const SnappyCodec: () => { compress(encoder: { buffer: Buffer }): Promise<Buffer>; decompress(buffer: Buffer): Promise<Buffer> };
  export = SnappyCodec;
}
