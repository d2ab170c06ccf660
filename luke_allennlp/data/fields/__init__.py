from luke_allennlp.data.fields.label_array_field import LabelArrayField

__all__ = ["LabelArrayField"]
