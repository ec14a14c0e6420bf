#!/usr/bin/python3
"""Writes the ONNX fixtures of this folder: graphs shaped as torch.onnx.export writes two well-known models, with
shape-only initializers (dims, no weights), so the files stay small. Debian has no python3-onnx, so the protobuf
wire format is written directly (onnx/onnx.proto field numbers).

  hf_bert_base_opset14.onnx      bert-base-uncased BertModel as transformers' ONNX export writes it at opset 14:
                                 LayerNorm decomposed (ReduceMean, Sub, Pow, Sqrt, Div), erf GELU, reshapes through
                                 Shape/Gather/Concat, the extended attention mask, the pooler; inputs input_ids,
                                 attention_mask, token_type_ids of [batch_size, sequence_length] (optimum's names).
  torchvision_resnet50_folded.onnx  torchvision resnet50 exported in eval mode with do_constant_folding: each
                                 BatchNorm folded into its convolution's bias; Gemm(transB=1) classifier.
  torchvision_resnet50_bn.onnx   the same with BatchNormalization nodes kept (training=TrainingMode.PRESERVE).

Run: /usr/bin/python3 tests/data/onnx/make_fixtures.py tests/data/onnx
"""
import os
import struct
import sys

FLOAT, INT64 = 1, 7


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint((field << 3) | wire)


def vint(field, n):
    return key(field, 0) + varint(n)


def ld(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def tensor(name, dims, dtype=FLOAT, raw=None, ints=None):
    """TensorProto: dims 1, data_type 2, name 8, raw_data 9. Learned tensors carry no data (shape only)."""
    b = b"".join(vint(1, d) for d in dims) + vint(2, dtype) + ld(8, name)
    if ints is not None:
        b += ld(9, b"".join(struct.pack("<q", v) for v in ints))
    elif raw is not None:
        b += ld(9, raw)
    return b


def attr(name, v):
    """AttributeProto: name 1, f 2, i 3, s 4, ints 8, type 20."""
    b = ld(1, name)
    if isinstance(v, float):
        return b + key(2, 5) + struct.pack("<f", v) + vint(20, 1)
    if isinstance(v, int):
        return b + vint(3, v) + vint(20, 2)
    if isinstance(v, list):
        return b + b"".join(vint(8, x) for x in v) + vint(20, 7)
    raise TypeError(v)


def node(op, ins, outs, **attrs):
    """NodeProto: input 1, output 2, name 3, op_type 4, attribute 5."""
    b = b"".join(ld(1, i) for i in ins) + b"".join(ld(2, o) for o in outs) + ld(3, outs[0]) + ld(4, op)
    for k, v in attrs.items():
        b += ld(5, attr(k, v))
    return b


def value_info(name, dims, dtype=FLOAT):
    """ValueInfoProto name 1, type 2 -> TypeProto.tensor_type 1 -> elem_type 1, shape 2 -> dim 1 (value 1, param 2)."""
    shape = b"".join(ld(1, vint(1, d) if isinstance(d, int) else ld(2, d)) for d in dims)
    return ld(1, name) + ld(2, ld(1, vint(1, dtype) + ld(2, shape)))


def model(nodes, inits, inputs, outputs, opset):
    """ModelProto: ir_version 1, producer_name 2, producer_version 3, graph 7, opset_import 8."""
    g = b"".join(ld(1, n) for n in nodes) + ld(2, "main_graph") + b"".join(ld(5, t) for t in inits)
    g += b"".join(ld(11, i) for i in inputs) + b"".join(ld(12, o) for o in outputs)
    return vint(1, 7) + ld(2, "pytorch") + ld(3, "2.1.0") + ld(7, g) + ld(8, ld(1, "") + vint(2, opset))


def resnet50(fold_bn):
    nodes, inits, count = [], [], [0]

    def conv(x, cin, cout, k, s, p):
        count[0] += 1
        n = f"conv{count[0]}"
        inits.append(tensor(n + ".weight", [cout, cin, k, k]))
        window = dict(kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p], dilations=[1, 1], group=1)
        if fold_bn:
            inits.append(tensor(n + ".bias", [cout]))
            nodes.append(node("Conv", [x, n + ".weight", n + ".bias"], [n + "_out"], **window))
            return n + "_out"
        nodes.append(node("Conv", [x, n + ".weight"], [n + "_c"], **window))
        stats = [f"{n}.bn.{t}" for t in ("weight", "bias", "running_mean", "running_var")]
        inits.extend(tensor(t, [cout]) for t in stats)
        nodes.append(node("BatchNormalization", [n + "_c"] + stats, [n + "_out"], epsilon=1e-5, momentum=0.9))
        return n + "_out"

    def relu(x):
        nodes.append(node("Relu", [x], [x + "_relu"]))
        return x + "_relu"

    x = relu(conv("input", 3, 64, 7, 2, 3))
    nodes.append(node("MaxPool", [x], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "pool", 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            s = stride if b == 0 else 1  # torchvision's v1.5: the stride on the 3x3
            y = relu(conv(x, cin, width, 1, 1, 0))
            y = relu(conv(y, width, width, 3, s, 1))
            y = conv(y, width, width * 4, 1, 1, 0)
            shortcut = conv(x, cin, width * 4, 1, s, 0) if b == 0 else x
            nodes.append(node("Add", [y, shortcut], [y + "_add"]))
            x, cin = relu(y + "_add"), width * 4
    nodes.append(node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(node("Flatten", ["gap"], ["flat"], axis=1))
    inits += [tensor("fc.weight", [1000, 2048]), tensor("fc.bias", [1000])]
    nodes.append(node("Gemm", ["flat", "fc.weight", "fc.bias"], ["output"], alpha=1.0, beta=1.0, transB=1))
    return model(nodes, inits, [value_info("input", ["batch_size", 3, 224, 224])],
                 [value_info("output", ["batch_size", 1000])], 13)


def bert_base():
    H, NH, FF, V, LAYERS = 768, 12, 3072, 30522, 12
    nodes, inits = [], []

    def const_i(name, vals, dims=None):
        inits.append(tensor(name, [len(vals)] if dims is None else dims, INT64, ints=vals))

    def const_f(name, v):
        inits.append(tensor(name, [], FLOAT, raw=struct.pack("<f", v)))

    for name, v in (("eps", 1e-12), ("two", 2.0), ("one", 1.0), ("half", 0.5), ("sqrt2", 1.4142135),
                    ("sqrt_head", 8.0), ("min_float", -3.4028234663852886e38)):
        const_f(name, v)
    const_i("i0", [0], [])
    const_i("i1", [1], [])
    for name, vals in (("ax0", [0]), ("one_1d", [1]), ("heads", [NH]), ("head_dim", [H // NH]), ("hidden", [H]),
                       ("ax12", [1, 2])):
        const_i(name, vals)

    def layer_norm(x, p):
        inits.extend([tensor(p + ".weight", [H]), tensor(p + ".bias", [H])])
        nodes.append(node("ReduceMean", [x], [p + "_mean"], axes=[-1], keepdims=1))
        nodes.append(node("Sub", [x, p + "_mean"], [p + "_d"]))
        nodes.append(node("Pow", [p + "_d", "two"], [p + "_sq"]))
        nodes.append(node("ReduceMean", [p + "_sq"], [p + "_var"], axes=[-1], keepdims=1))
        nodes.append(node("Add", [p + "_var", "eps"], [p + "_ve"]))
        nodes.append(node("Sqrt", [p + "_ve"], [p + "_std"]))
        nodes.append(node("Div", [p + "_d", p + "_std"], [p + "_n"]))
        nodes.append(node("Mul", [p + "_n", p + ".weight"], [p + "_g"]))
        nodes.append(node("Add", [p + "_g", p + ".bias"], [p + "_out"]))
        return p + "_out"

    def linear(x, p, i, o):
        inits.extend([tensor(p + ".weight_t", [i, o]), tensor(p + ".bias", [o])])
        nodes.append(node("MatMul", [x, p + ".weight_t"], [p + "_mm"]))
        nodes.append(node("Add", [p + ".bias", p + "_mm"], [p + "_out"]))
        return p + "_out"

    nodes.append(node("Shape", ["input_ids"], ["ids_shape"]))
    nodes.append(node("Gather", ["ids_shape", "i0"], ["B"], axis=0))
    nodes.append(node("Gather", ["ids_shape", "i1"], ["S"], axis=0))
    nodes.append(node("Unsqueeze", ["B", "ax0"], ["B1"]))
    nodes.append(node("Unsqueeze", ["S", "ax0"], ["S1"]))
    inits += [tensor("embeddings.word_embeddings.weight", [V, H]),
              tensor("embeddings.position_embeddings.weight", [512, H]),
              tensor("embeddings.token_type_embeddings.weight", [2, H])]
    const_i("embeddings.position_ids", list(range(512)), [1, 512])  # a buffer, not a parameter
    nodes.append(node("Slice", ["embeddings.position_ids", "ax0", "S1", "one_1d"], ["position_ids"]))
    nodes.append(node("Gather", ["embeddings.word_embeddings.weight", "input_ids"], ["words"]))
    nodes.append(node("Gather", ["embeddings.token_type_embeddings.weight", "token_type_ids"], ["types"]))
    nodes.append(node("Add", ["words", "types"], ["words_types"]))
    nodes.append(node("Gather", ["embeddings.position_embeddings.weight", "position_ids"], ["positions"]))
    nodes.append(node("Add", ["words_types", "positions"], ["embedded"]))
    x = layer_norm("embedded", "embeddings.LayerNorm")
    nodes.append(node("Unsqueeze", ["attention_mask", "ax12"], ["mask4"]))
    nodes.append(node("Cast", ["mask4"], ["mask4f"], to=FLOAT))
    nodes.append(node("Sub", ["one", "mask4f"], ["mask_inv"]))
    nodes.append(node("Mul", ["mask_inv", "min_float"], ["mask_add"]))
    nodes.append(node("Concat", ["B1", "S1", "heads", "head_dim"], ["split_shape"], axis=0))
    nodes.append(node("Concat", ["B1", "S1", "hidden"], ["merge_shape"], axis=0))
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}"
        q, k, v = (linear(x, f"{p}.attention.self.{t}", H, H) for t in ("query", "key", "value"))
        for t in (q, k, v):
            nodes.append(node("Reshape", [t, "split_shape"], [t + "_heads"]))
        nodes.append(node("Transpose", [q + "_heads"], [q + "_t"], perm=[0, 2, 1, 3]))
        nodes.append(node("Transpose", [k + "_heads"], [k + "_t"], perm=[0, 2, 3, 1]))
        nodes.append(node("Transpose", [v + "_heads"], [v + "_t"], perm=[0, 2, 1, 3]))
        nodes.append(node("MatMul", [q + "_t", k + "_t"], [p + "_scores"]))
        nodes.append(node("Div", [p + "_scores", "sqrt_head"], [p + "_scaled"]))
        nodes.append(node("Add", [p + "_scaled", "mask_add"], [p + "_masked"]))
        nodes.append(node("Softmax", [p + "_masked"], [p + "_probs"], axis=-1))
        nodes.append(node("MatMul", [p + "_probs", v + "_t"], [p + "_context"]))
        nodes.append(node("Transpose", [p + "_context"], [p + "_context_t"], perm=[0, 2, 1, 3]))
        nodes.append(node("Reshape", [p + "_context_t", "merge_shape"], [p + "_merged"]))
        a = linear(p + "_merged", p + ".attention.output.dense", H, H)
        nodes.append(node("Add", [a, x], [p + "_res1"]))
        x = layer_norm(p + "_res1", p + ".attention.output.LayerNorm")
        f = linear(x, p + ".intermediate.dense", H, FF)
        nodes.append(node("Div", [f, "sqrt2"], [f + "_d"]))
        nodes.append(node("Erf", [f + "_d"], [f + "_erf"]))
        nodes.append(node("Add", [f + "_erf", "one"], [f + "_a"]))
        nodes.append(node("Mul", [f, f + "_a"], [f + "_m"]))
        nodes.append(node("Mul", [f + "_m", "half"], [f + "_gelu"]))
        f2 = linear(f + "_gelu", p + ".output.dense", FF, H)
        nodes.append(node("Add", [f2, x], [p + "_res2"]))
        x = layer_norm(p + "_res2", p + ".output.LayerNorm")
    nodes.append(node("Identity", [x], ["last_hidden_state"]))
    nodes.append(node("Gather", [x, "i0"], ["cls"], axis=1))
    inits += [tensor("pooler.dense.weight", [H, H]), tensor("pooler.dense.bias", [H])]
    nodes.append(node("Gemm", ["cls", "pooler.dense.weight", "pooler.dense.bias"], ["pooled"], alpha=1.0, beta=1.0,
                      transB=1))
    nodes.append(node("Tanh", ["pooled"], ["pooler_output"]))
    inputs = [value_info(n, ["batch_size", "sequence_length"], INT64)
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [value_info("last_hidden_state", ["batch_size", "sequence_length", H]),
               value_info("pooler_output", ["batch_size", H])]
    return model(nodes, inits, inputs, outputs, 14)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, data in (("hf_bert_base_opset14.onnx", bert_base()),
                       ("torchvision_resnet50_folded.onnx", resnet50(True)),
                       ("torchvision_resnet50_bn.onnx", resnet50(False))):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
