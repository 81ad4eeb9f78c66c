// NodeMapper::map: the checks every mapping shares, then the mapper the table names for the
// node's op type.
#include "NodeMapper.h"

#include <stdexcept>

namespace passlens::onnximport {

void addMapper(MapperTable& table, const std::string& opType, Mapper mapper) {
    if (!table.emplace(opType, std::move(mapper)).second)
        throw std::logic_error("ONNX op type '" + opType + "' has two mappers");
}

namespace {

const MapperTable& mappers() {
    static const MapperTable table = [] {
        MapperTable t;
        addElementwiseMappers(t);
        addShapeMappers(t);
        addIndexMappers(t);
        addNetworkMappers(t);
        addReductionMappers(t);
        return t;
    }();
    return table;
}

} // namespace

std::vector<Variable*> NodeMapper::map() {
    if (!node.domain().empty() && node.domain() != "ai.onnx") return {};
    // Theano's ops need known ranks; a value ONNX could not type stays with an Onnx op,
    for (auto* v : in)
        if (v && !v->type().rankKnown()) return {};
    // nor any string tensor (ONNX's STRING; Theano has no string dtype)
    for (auto* v : in)
        if (v && isString(v->type().dtype())) return {};
    const auto it = mappers().find(node.op_type());
    if (it == mappers().end()) return {};
    return it->second(*this);
}

} // namespace passlens::onnximport
