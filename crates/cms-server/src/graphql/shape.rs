//! How a data field's stored value is exposed, and the GraphQL type that says so.

use async_graphql::dynamic::TypeRef;

/// How a data field's stored value is exposed.
#[derive(Debug, Clone)]
pub enum Shape {
    String,
    Float,
    Boolean,
    /// A slug's `current`.
    Slug,
    Json,
    Image,
    File,
    /// An object of the named GraphQL type.
    Object(String),
    /// `{ _ref }` resolved to the referenced document; `type_name` is the document type or the
    /// union of `targets` (schema name, GraphQL name).
    Reference {
        type_name: String,
        targets: Vec<(String, String)>,
    },
    List(Box<Shape>),
}

/// The output type of a shape.
pub fn type_ref(shape: &Shape) -> TypeRef {
    match shape {
        Shape::String | Shape::Slug => TypeRef::named(TypeRef::STRING),
        Shape::Float => TypeRef::named(TypeRef::FLOAT),
        Shape::Boolean => TypeRef::named(TypeRef::BOOLEAN),
        Shape::Json => TypeRef::named("JSON"),
        Shape::Image => TypeRef::named("ImageValue"),
        Shape::File => TypeRef::named("FileValue"),
        Shape::Object(name) => TypeRef::named(name.clone()),
        Shape::Reference { type_name, .. } => TypeRef::named(type_name.clone()),
        Shape::List(inner) => TypeRef::List(Box::new(type_ref(inner))),
    }
}
